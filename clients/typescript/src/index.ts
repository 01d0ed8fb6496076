// engram's TypeScript client: no dependencies, ESM, Node 18+ and browsers.
export { Engram, DEFAULT_URL } from "./client.js";
export type { EngramOptions, CallOptions, RememberOptions, RecallOptions, ForgetTurnOptions } from "./client.js";
export { EngramError } from "./errors.js";
export type { ErrorCode, ClientErrorCode } from "./errors.js";
export { ROUTES } from "./routes.js";
export type { Route, RouteName } from "./routes.js";
export type * from "./types.js";
