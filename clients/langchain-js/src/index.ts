// LangChain.js over engram: a retriever over recall and a chat message
// history over remember, on the TypeScript client (engram-client).
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { Document } from "@langchain/core/documents";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, isAIMessage, isToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Engram, EngramError, type EngramOptions, type Kind, type RecallMode, type Result, type Role, type TurnInput } from "engram-client";

/**
 * The metadata of a Document the retriever answers: the recall result but
 * its text (the Document's pageContent): id, kind, score, ts, namespace,
 * session, role, speaker, meta, sources (the archived turns it stems from),
 * and for deep results signals and context.
 */
export type EngramDocumentMetadata = Omit<Result, "text"> & { [key: string]: unknown };

/** Options of EngramRetriever. */
export interface EngramRetrieverInput extends BaseRetrieverInput {
  /** The client; default one made from clientOptions (ENGRAM_URL, ENGRAM_TOKEN). */
  client?: Engram;
  clientOptions?: EngramOptions;
  namespace?: string;
  /** Results per query, 1 to 200; default the server's (10). */
  k?: number;
  mode?: RecallMode;
  kinds?: Kind[];
  /** Recall what was known then. */
  asOf?: string | Date;
}

/**
 * A retriever over engram's recall: each result becomes a Document whose
 * pageContent is the result's text and whose metadata carries its id, kind,
 * score, time, speaker and the archived turns it stems from (`sources`).
 */
export class EngramRetriever extends BaseRetriever<EngramDocumentMetadata> {
  static lc_name(): string {
    return "EngramRetriever";
  }

  lc_namespace = ["engram", "retrievers"];

  readonly client: Engram;
  namespace: string | undefined;
  k: number | undefined;
  mode: RecallMode | undefined;
  kinds: Kind[] | undefined;
  asOf: string | Date | undefined;
  /** The warnings of the last recall (when it ran degraded), else empty. */
  lastWarnings: string[] = [];

  constructor(fields: EngramRetrieverInput = {}) {
    super(fields);
    this.client = fields.client ?? new Engram(fields.clientOptions);
    this.namespace = fields.namespace;
    this.k = fields.k;
    this.mode = fields.mode;
    this.kinds = fields.kinds;
    this.asOf = fields.asOf;
  }

  async _getRelevantDocuments(query: string, runManager?: CallbackManagerForRetrieverRun): Promise<Document<EngramDocumentMetadata>[]> {
    const res = await this.client.recall(query, {
      ...(this.namespace !== undefined && { namespace: this.namespace }),
      ...(this.k !== undefined && { k: this.k }),
      ...(this.mode !== undefined && { mode: this.mode }),
      ...(this.kinds !== undefined && { kinds: this.kinds }),
      ...(this.asOf !== undefined && { as_of: this.asOf }),
    });
    this.lastWarnings = res.warnings ?? [];
    for (const w of this.lastWarnings) await runManager?.handleText(`engram: ${w}`);
    return res.results.map((r) => {
      const { text, ...metadata } = r;
      return new Document<EngramDocumentMetadata>({ pageContent: text, metadata, id: r.id });
    });
  }
}

/** Options of EngramChatMessageHistory. */
export interface EngramChatMessageHistoryInput {
  /** The engram session the messages are turns of. */
  sessionId: string;
  namespace?: string;
  client?: Engram;
  clientOptions?: EngramOptions;
  /** The speaker of human messages without a name (e.g. the user's name). */
  humanSpeaker?: string;
  /** The speaker of AI messages without a name (e.g. the agent's name). */
  aiSpeaker?: string;
}

// The meta key under which a message keeps what engram's turn has no field
// for, so that getMessages gives back the same kind of message.
const META_KEY = "langchain";

interface MessageMeta {
  type: string;
  id?: string;
  name?: string;
  tool_call_id?: string;
  tool_calls?: unknown[];
  /** The message had no text: the turn's content spells out its tool calls. */
  no_text?: boolean;
}

const roleOf: Record<string, Role> = { human: "user", ai: "assistant", system: "system", tool: "tool", generic: "user", function: "tool" };

/**
 * A chat message history kept in engram: each message added is archived as a
 * turn of the session (human: user, ai: assistant, system, tool), so that it
 * is recalled with everything else; getMessages reads the session's turns
 * back in order; clear forgets them.
 */
export class EngramChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["engram", "chat_history"];

  readonly client: Engram;
  readonly sessionId: string;
  readonly namespace: string | undefined;
  readonly #humanSpeaker: string | undefined;
  readonly #aiSpeaker: string | undefined;

  constructor(fields: EngramChatMessageHistoryInput) {
    super(fields);
    if (typeof fields?.sessionId !== "string" || fields.sessionId === "") {
      throw new TypeError("EngramChatMessageHistory: sessionId is required (the engram session of the conversation)");
    }
    this.client = fields.client ?? new Engram(fields.clientOptions);
    this.sessionId = fields.sessionId;
    this.namespace = fields.namespace;
    this.#humanSpeaker = fields.humanSpeaker;
    this.#aiSpeaker = fields.aiSpeaker;
  }

  async getMessages(): Promise<BaseMessage[]> {
    const messages: BaseMessage[] = [];
    let after: number | undefined;
    do {
      const page = await this.client.turns({
        session: this.sessionId,
        limit: 1000,
        ...(this.namespace !== undefined && { namespace: this.namespace }),
        ...(after !== undefined && { after }),
      });
      for (const t of page.turns) messages.push(toMessage(t.role, t.content, t.speaker, t.meta?.[META_KEY] as MessageMeta | undefined));
      after = page.next || undefined;
    } while (after !== undefined);
    return messages;
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** Archives the messages as one batch: all of them, or none. */
  async addMessages(messages: BaseMessage[]): Promise<void> {
    const turns = messages.map((m) => this.#toTurn(m)).filter((t): t is TurnInput => t !== undefined);
    if (turns.length > 0) await this.client.remember(turns);
  }

  /** Forgets every turn of the session (their archive lines become tombstones). */
  async clear(): Promise<void> {
    try {
      await this.client.forget({ session: this.sessionId, reason: "chat history cleared", ...(this.namespace !== undefined && { namespace: this.namespace }) });
    } catch (err) {
      // A session with no turns left is already clear.
      if (!(err instanceof EngramError && err.code === "not_found")) throw err;
    }
  }

  #toTurn(m: BaseMessage): TurnInput | undefined {
    const type = m.getType();
    const meta: MessageMeta = { type };
    if (m.id) meta.id = m.id;
    if (m.name) meta.name = m.name;
    if (isToolMessage(m)) meta.tool_call_id = m.tool_call_id;
    const toolCalls = isAIMessage(m) ? m.tool_calls ?? [] : [];
    if (toolCalls.length > 0) meta.tool_calls = toolCalls;
    // An AI message that only calls tools has no text; the calls stand in,
    // so that the turn says what the agent did.
    let content = m.text;
    if (content === "") {
      content = toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join("\n");
      meta.no_text = true;
    }
    if (content === "") return undefined;
    const speaker = m.name ?? (type === "human" ? this.#humanSpeaker : type === "ai" ? this.#aiSpeaker : undefined);
    return {
      session: this.sessionId,
      ...(this.namespace !== undefined && { namespace: this.namespace }),
      role: roleOf[type] ?? "user",
      ...(speaker !== undefined && { speaker }),
      content,
      meta: { [META_KEY]: meta },
    };
  }
}

function toMessage(role: string, content: string, speaker: string | undefined, meta: MessageMeta | undefined): BaseMessage {
  const name = meta?.name;
  const id = meta?.id;
  const common = { content: meta?.no_text ? "" : content, ...(name !== undefined && { name }), ...(id !== undefined && { id }) };
  switch (meta?.type ?? role) {
    case "ai":
    case "assistant":
      return new AIMessage({ ...common, ...(meta?.tool_calls ? { tool_calls: meta.tool_calls as AIMessage["tool_calls"] } : {}) });
    case "system":
      return new SystemMessage(common);
    case "tool":
      return new ToolMessage({ ...common, tool_call_id: meta?.tool_call_id ?? "" });
    default:
      return new HumanMessage({ ...common, ...(name === undefined && speaker !== undefined && meta === undefined && { name: speaker }) });
  }
}
