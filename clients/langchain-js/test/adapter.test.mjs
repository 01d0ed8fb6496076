// The LangChain.js adapter with the real @langchain/core against a real
// `engram serve`.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { Document } from "@langchain/core/documents";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { BaseRetriever } from "@langchain/core/retrievers";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { Engram, EngramError } from "engram-client";
import { EngramRetriever, EngramChatMessageHistory } from "../dist/index.js";
import { startServer } from "../../typescript/test/server.mjs";

let server, client;
before(async () => {
  server = await startServer();
  client = new Engram({ url: server.url });
});
after(() => server?.stop());

describe("EngramChatMessageHistory", () => {
  test("is a BaseListChatMessageHistory that keeps messages as turns of the session", async () => {
    const history = new EngramChatMessageHistory({ client, sessionId: "chat-1", humanSpeaker: "Ana", aiSpeaker: "helper" });
    assert.ok(history instanceof BaseListChatMessageHistory);
    await history.addMessages([
      new SystemMessage("You are a helpful assistant."),
      new HumanMessage("I moved from Lisbon to Porto last month."),
      new AIMessage("Noted: you live in Porto now."),
    ]);
    await history.addUserMessage("My sister Rita still lives in Lisbon.");
    const { turns } = await client.turns({ session: "chat-1" });
    assert.deepEqual(turns.map((t) => [t.role, t.speaker ?? null, t.content]), [
      ["system", null, "You are a helpful assistant."],
      ["user", "Ana", "I moved from Lisbon to Porto last month."],
      ["assistant", "helper", "Noted: you live in Porto now."],
      ["user", "Ana", "My sister Rita still lives in Lisbon."],
    ]);
    const messages = await history.getMessages();
    assert.deepEqual(messages.map((m) => [m.getType(), m.text]), [
      ["system", "You are a helpful assistant."],
      ["human", "I moved from Lisbon to Porto last month."],
      ["ai", "Noted: you live in Porto now."],
      ["human", "My sister Rita still lives in Lisbon."],
    ]);
    assert.deepEqual(await new EngramChatMessageHistory({ client, sessionId: "chat-other" }).getMessages(), []);
  });

  test("tool calls and tool answers come back as they were added", async () => {
    const history = new EngramChatMessageHistory({ client, sessionId: "chat-tools", namespace: "agents" });
    await history.addMessages([
      new HumanMessage("What's the weather in Porto?"),
      new AIMessage({ content: "", tool_calls: [{ id: "call-1", name: "weather", args: { city: "Porto" } }] }),
      new ToolMessage({ content: "18C, cloudy", tool_call_id: "call-1", name: "weather" }),
      new AIMessage("It is 18C and cloudy in Porto."),
    ]);
    const messages = await history.getMessages();
    assert.deepEqual(messages.map((m) => m.getType()), ["human", "ai", "tool", "ai"]);
    assert.equal(messages[1].content, "");
    assert.deepEqual(messages[1].tool_calls.map((c) => [c.id, c.name, c.args]), [["call-1", "weather", { city: "Porto" }]]);
    assert.equal(messages[2].tool_call_id, "call-1");
    assert.equal(messages[2].name, "weather");
    // The turn says what the agent did, so that recall finds it.
    const { turns } = await client.turns({ session: "chat-tools", namespace: "agents" });
    assert.equal(turns[1].content, 'weather({"city":"Porto"})');
    assert.equal(turns[1].namespace, "agents");
  });

  test("clear forgets the session's turns, and a clear session stays clear", async () => {
    const history = new EngramChatMessageHistory({ client, sessionId: "chat-clear" });
    await history.addMessages([new HumanMessage("the walrus password is plankton")]);
    assert.ok((await client.recall("walrus password", { mode: "keyword" })).results.some((r) => r.session === "chat-clear"));
    await history.clear();
    assert.deepEqual(await history.getMessages(), []);
    assert.deepEqual((await client.recall("walrus password", { mode: "keyword" })).results.filter((r) => r.session === "chat-clear"), []);
    await history.clear();
  });

  test("refuses a missing session, and passes the API's errors on", async () => {
    assert.throws(() => new EngramChatMessageHistory({ client }), /sessionId is required/);
    const bad = new EngramChatMessageHistory({ client, sessionId: "s", namespace: "a/b" });
    await assert.rejects(bad.addMessage(new HumanMessage("hi")), (err) => err instanceof EngramError && err.code === "invalid" && err.field === "turns[0].namespace");
  });

  test("RunnableWithMessageHistory keeps a chain's conversation in engram", async () => {
    const prompt = ChatPromptTemplate.fromMessages([["system", "Be brief."], new MessagesPlaceholder("history"), ["human", "{question}"]]);
    // The model is LangChain's scripted test model: this test is about where
    // the conversation goes, not about what a model answers.
    const model = new FakeListChatModel({ responses: ["Porto, since last month.", "Rita lives in Lisbon."] });
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: (sessionId) => new EngramChatMessageHistory({ client, sessionId, humanSpeaker: "Ana" }),
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    });
    const config = { configurable: { sessionId: "chat-chain" } };
    await chain.invoke({ question: "Where do I live?" }, config);
    await chain.invoke({ question: "And my sister?" }, config);
    const { turns } = await client.turns({ session: "chat-chain" });
    assert.deepEqual(turns.map((t) => `${t.role}: ${t.content}`), [
      "user: Where do I live?",
      "assistant: Porto, since last month.",
      "user: And my sister?",
      "assistant: Rita lives in Lisbon.",
    ]);
  });
});

describe("EngramRetriever", () => {
  before(async () => {
    await client.remember([
      { session: "r1", speaker: "Ana", content: "We decided to keep the billing service on Postgres 16.", id: "t-pg", meta: { channel: "#infra" } },
      { session: "r1", speaker: "Bo", content: "Deploys go out on Thursdays.", id: "t-deploy" },
      { session: "r2", namespace: "work", speaker: "Cy", content: "The work billing runs on MySQL.", id: "t-my" },
    ]);
  });

  test("is a BaseRetriever answering Documents with the result's metadata and source turns", async () => {
    const retriever = new EngramRetriever({ client, k: 3 });
    assert.ok(retriever instanceof BaseRetriever);
    const docs = await retriever.invoke("which database does billing use?");
    assert.ok(docs.length > 0 && docs.length <= 3, String(docs.length));
    assert.ok(docs.every((d) => d instanceof Document));
    const pg = docs.find((d) => d.metadata.id === "t-pg");
    assert.ok(pg, JSON.stringify(docs.map((d) => d.metadata.id)));
    assert.equal(pg.pageContent, "We decided to keep the billing service on Postgres 16.");
    assert.equal(pg.id, "t-pg");
    assert.equal(pg.metadata.kind, "turn");
    assert.equal(pg.metadata.speaker, "Ana");
    assert.equal(pg.metadata.session, "r1");
    assert.equal(typeof pg.metadata.score, "number");
    assert.deepEqual(pg.metadata.meta, { channel: "#infra" });
    assert.deepEqual(pg.metadata.sources.map((s) => [s.id, s.session]), [["t-pg", "r1"]]);
    assert.equal("text" in pg.metadata, false);
    assert.ok(docs.every((d) => d.metadata.namespace === "default"));
  });

  test("namespace, mode, kinds and asOf reach recall", async () => {
    const work = await new EngramRetriever({ client, namespace: "work" }).invoke("billing database");
    assert.deepEqual(work.map((d) => d.metadata.id), ["t-my"]);
    const deep = await new EngramRetriever({ client, mode: "deep", k: 2 }).invoke("billing database");
    assert.ok(deep.length > 0 && deep.every((d) => typeof d.metadata.signals?.final === "number"));
    assert.deepEqual(await new EngramRetriever({ client, asOf: new Date("2001-01-01T00:00:00Z") }).invoke("billing database"), []);
    await client.runJob("l1-memories");
    const memories = await new EngramRetriever({ client, kinds: ["memory"] }).invoke("what did we decide about billing?");
    assert.ok(memories.length > 0 && memories.every((d) => d.metadata.kind === "memory"), JSON.stringify(memories));
    assert.ok(memories.some((d) => d.metadata.sources.some((s) => s.id === "t-pg")), "a memory's Document names its source turn");
  });

  test("works in a chain, and passes the API's errors on", async () => {
    const retriever = new EngramRetriever({ client, k: 2 });
    const chain = retriever.pipe(RunnableLambda.from((docs) => docs.map((d) => `${d.metadata.speaker}: ${d.pageContent}`).join("\n")));
    assert.match(await chain.invoke("when do deploys go out?"), /Bo: Deploys go out on Thursdays\./);
    await assert.rejects(new EngramRetriever({ client, k: 0 }).invoke("x"), (err) => err instanceof EngramError && err.code === "invalid" && err.field === "k");
  });
});
