/**
 * The API's stable error codes (docs/api.md, "Errors"): branch on these,
 * never on the message.
 * @schemaEnum Error.error.code
 */
export type ErrorCode =
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "locked"
  | "timeout"
  | "too_large"
  | "unsupported_media_type"
  | "internal"
  | "not_supported"
  | "unavailable"
  | "no_space";

/**
 * Codes of failures with no answer from the API: `network` (the server
 * could not be reached or the connection broke), `aborted` (the caller's
 * signal fired), `client_timeout` (the client's timeout ran out) and
 * `bad_response` (an answer that is not the API's JSON).
 */
export type ClientErrorCode = "network" | "aborted" | "client_timeout" | "bad_response";

// The code of an answer without the API's error body (a proxy's page, say),
// from its status, as httpapi/errors.go maps them.
const codeOfStatus: { [status: number]: ErrorCode } = {
  400: "invalid",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  408: "timeout",
  409: "conflict",
  413: "too_large",
  415: "unsupported_media_type",
  500: "internal",
  501: "not_supported",
  503: "unavailable",
  507: "no_space",
};

/** An error of a call: the API's (code, message, field, HTTP status) or the client's own. */
export class EngramError extends Error {
  /** The API's code, or the client's own when no answer came. */
  readonly code: ErrorCode | ClientErrorCode;
  /** The request field at fault (e.g. `turns[1].session`), when the API names one. */
  readonly field?: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The method and path of the call, e.g. `POST /v1/recall`. */
  readonly request: string;

  constructor(code: ErrorCode | ClientErrorCode, message: string, opts: { field?: string; status?: number; request?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "EngramError";
    this.code = code;
    this.status = opts.status ?? 0;
    this.request = opts.request ?? "";
    if (opts.field !== undefined) this.field = opts.field;
  }

  /** The error of an answer with a failure status, from its body. */
  static fromAnswer(status: number, bodyText: string, request: string): EngramError {
    try {
      const body = JSON.parse(bodyText) as { error?: { code?: unknown; message?: unknown; field?: unknown } };
      const e = body?.error;
      if (e && typeof e.code === "string" && typeof e.message === "string") {
        return new EngramError(e.code as ErrorCode, e.message, {
          status,
          request,
          ...(typeof e.field === "string" ? { field: e.field } : {}),
        });
      }
    } catch {
      // Not JSON: described below from the status.
    }
    const code = codeOfStatus[status] ?? (status >= 500 ? "internal" : "invalid");
    const text = bodyText.trim().slice(0, 200);
    return new EngramError(code, `${request}: HTTP ${status}${text ? `: ${text}` : ""}`, { status, request });
  }
}
