package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// SystemPrompt tells the model what to extract and how to write it: the
// conventions of the offline extractor (extract.NLPExtractor), so that a
// memory reads the same whichever extractor made it. The speaker is named
// instead of "I", the other speaker instead of "you"; a relative time is
// written as the date it names, from the turn's date; an event carries that
// date in valid_from; relations take the predicates of the offline
// extractor.
const SystemPrompt = `You extract what is worth remembering from a conversation, for an assistant's long-term memory.
Reply with JSON only: {"memories":[...]}. One memory per statement a speaker makes about themselves, the people they talk to or what they decided. Each memory:
- type: "event" (something that happened, or is going on), "fact" (what someone is, has or usually does), "preference" (a like or dislike), "plan" (an intention, a todo, a suggestion to do something) or "decision" (something chosen)
- text: one sentence in the third person that names the people: the speaker's name instead of "I" and "my", the other speaker's name instead of "you", both names instead of "we" when the listener is included; a relative time ("yesterday", "last week", "next month") written as the date it names, counted from the turn's date; e.g. "Jon lost his job as a banker on 19 January 2023"; keep the conversation's language
- rationale: why, for a decision; else ""
- subject: the name of the speaker the memory is about
- entities: names of the people, places, organisations, tools and projects in it
- importance: 0 (trivial) to 1 (essential)
- turn: the number of the turn it comes from
- valid_from: the date (YYYY-MM-DD) an event happened or a fact began, when the conversation says; else ""
- relation (optional): {"subject":..., "predicate":..., "object":...}, the subject a speaker, the predicate one of name, lives_in, born_in, is_from, works_at, works_as, is, likes, dislikes, prefers, favourite_<thing>, uses, uses_for_<purpose>, avoids, works_on, habit, or a relative, friend, colleague or pet (sister, brother, mother, father, son, daughter, married_to, partner, friend, best_friend, colleague, boss, manager, cousin, aunt, uncle, grandmother, grandfather, dog, cat) whose object is the name, or else for an action of the speaker's the <verb> as said with its preposition, whose object is the thing (went_to, applied_to, finished, bought; plans_to_<verb> for a plan: plans_to_visit)
Only what a speaker states as true: skip questions, hypotheticals, what others said, greetings, thanks, compliments, feelings and small talk ("I will keep it up"). If nothing is worth keeping: {"memories":[]}`

// RetryReminder is added to the prompt of a second attempt at a batch: with
// temperature 0 the same prompt would give the same reply.
const RetryReminder = "\n\nYour last reply was not usable. Reply with the JSON object alone (no prose, no code fence), at most 8 memories with short texts."

// Message is one message of a chat.
type Message struct {
	Role    string `json:"role"` // "system" or "user"
	Content string `json:"content"`
}

// Prompt returns the messages for a batch: the instructions, then the turns
// numbered from 1 with date and speaker. A retry adds RetryReminder.
func Prompt(batch []*engram.Turn, retry bool) []Message {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for i, t := range batch {
		fmt.Fprintf(&b, "[%d] ", i+1)
		if !t.TS.IsZero() {
			b.WriteString(t.TS.UTC().Format("2006-01-02 "))
		}
		if t.Speaker != "" {
			fmt.Fprintf(&b, "%s (%s): ", oneLine(t.Speaker, maxNameRunes), t.Role)
		} else {
			fmt.Fprintf(&b, "%s: ", t.Role)
		}
		b.WriteString(oneLine(t.Content, maxTurnRunes))
		b.WriteByte('\n')
	}
	if retry {
		b.WriteString(RetryReminder)
	}
	return []Message{{Role: "system", Content: SystemPrompt}, {Role: "user", Content: b.String()}}
}

// oneLine collapses white space (newlines included) and cuts s to max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

// ReplySchema is the reply's JSON schema, given with the request (Ollama's
// format, an OpenAI-compatible server's response_format): a server that
// constrains sampling to it keeps a model from prose and code fences; a
// reply can still be cut off by its token limit.
var ReplySchema = json.RawMessage(`{"type":"object","properties":{"memories":{"type":"array","items":{"type":"object","properties":{` +
	`"type":{"type":"string","enum":["fact","decision","preference","plan","event"]},` +
	`"text":{"type":"string"},"rationale":{"type":"string"},"subject":{"type":"string"},` +
	`"entities":{"type":"array","items":{"type":"string"}},"importance":{"type":"number"},"turn":{"type":"integer"},"valid_from":{"type":"string"},` +
	`"relation":{"type":"object","properties":{"subject":{"type":"string"},"predicate":{"type":"string"},"object":{"type":"string"}},"required":["subject","predicate","object"]}},` +
	`"required":["type","text","subject","entities","importance","turn"]}}},"required":["memories"]}`)
