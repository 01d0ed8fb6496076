// Remember a conversation, then recall from it: the client's first steps.
//
//   ENGRAM_URL=http://127.0.0.1:30001 node examples/quickstart.mjs
//
// (ENGRAM_URL defaults to that address; set ENGRAM_TOKEN when the server has
// a token.) Inside this repository the import is the built package; an app
// imports "engram-client".
import { Engram, EngramError } from "../dist/index.js";

const engram = new Engram();
const session = `quickstart-${Date.now()}`;

await engram.remember([
  { session, speaker: "Ana", content: "Let's keep the billing service on Postgres 16." },
  { session, role: "assistant", content: "Noted: billing stays on Postgres 16." },
  { session, speaker: "Ana", content: "And deploys go out on Thursdays, never on Fridays." },
]);

const { mode, results } = await engram.recall("which database does billing use?", { k: 3 });
console.log(`recall (${mode}):`);
for (const r of results) {
  const who = r.speaker ?? r.role ?? r.kind;
  console.log(`  ${r.score.toFixed(3)}  ${who}: ${r.text}  [from ${r.sources.map((s) => s.id).join(", ")}]`);
}

// Errors carry the API's code and the field at fault.
try {
  await engram.recall("anything", { k: 0 });
} catch (err) {
  if (!(err instanceof EngramError)) throw err;
  console.log(`refused: ${err.code} on ${err.field}: ${err.message}`);
}
