// An agent's memory with LangChain.js: the conversation goes into engram
// through the chat message history, and the next prompt gets what engram
// recalls through the retriever.
//
//   ENGRAM_URL=http://127.0.0.1:30001 node examples/agent-memory.mjs
//
// It prints the prompt it would send to a chat model; pipe the prompt into
// your model (prompt.pipe(model)) in a real agent. Inside this repository
// the import is the built package; an app imports "engram-langchain".
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { EngramChatMessageHistory, EngramRetriever } from "../dist/index.js";

const sessionId = `agent-memory-${Date.now()}`;
const history = new EngramChatMessageHistory({ sessionId, humanSpeaker: "Ana", aiSpeaker: "agent" });
await history.addMessages([
  new HumanMessage("We're moving the billing service to Postgres 16 next sprint."),
  new AIMessage("Got it: billing moves to Postgres 16 next sprint."),
]);

const retriever = new EngramRetriever({ k: 3 });
const question = "Which database will billing use?";
const docs = await retriever.invoke(question);
const memory = docs
  .map((d) => `- ${d.metadata.speaker ?? d.metadata.role ?? d.metadata.kind} (${d.metadata.ts}): ${d.pageContent} [turns ${d.metadata.sources.map((s) => s.id).join(", ")}]`)
  .join("\n");

const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are Ana's assistant. What you remember:\n{memory}"],
  new MessagesPlaceholder("history"),
  ["human", "{question}"],
]);
const messages = await prompt.formatMessages({ memory, history: await history.getMessages(), question });
for (const m of messages) console.log(`${m.getType()}: ${m.text}`);
