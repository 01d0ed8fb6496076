package mcp

import (
	"context"
	"strings"

	"github.com/engram-dev/engram"
)

// Tool names of the layer and vault browsing tools.
const (
	ToolScenes      = "scenes"
	ToolPersona     = "persona"
	ToolVaultSearch = "vault_search"
	ToolDocGraph    = "doc_graph"
)

// DocGraphService is what the doc_graph tool needs of the vaults
// (engram.VaultService's DocGraph).
type DocGraphService interface {
	// DocGraph returns the documents linked from doc within depth;
	// ENOTFOUND for an unknown document.
	DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error)
}

// ScenesInput is the input of the scenes tool.
type ScenesInput struct {
	Query     string `json:"query,omitempty" jsonschema:"keywords to rank by (BM25); default: newest first"`
	Session   string `json:"session,omitempty" jsonschema:"only scenes of this session"`
	From      string `json:"from,omitempty" jsonschema:"only scenes that end at or after this moment (RFC 3339 or a date)"`
	To        string `json:"to,omitempty" jsonschema:"only scenes that start before this moment (RFC 3339 or a date, meaning its start)"`
	Namespace string `json:"namespace,omitempty" jsonschema:"memory space, \"*\" for all (default \"default\")"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most scenes, 1 to 1000 (default 10)"`
}

// ScenesOutput is a list of L2 scenes.
type ScenesOutput struct {
	Scenes []engram.Scene `json:"scenes" jsonschema:"stretches of one session on one topic, with a title, a summary, the participants and the turns they hold"`
}

// PersonaInput is the input of the persona tool.
type PersonaInput struct {
	Speaker   string `json:"speaker,omitempty" jsonschema:"the speaker, by name (case-insensitive); default every speaker of the namespace"`
	Namespace string `json:"namespace,omitempty" jsonschema:"memory space (default \"default\")"`
}

// PersonaOutput is the L3 profiles asked for.
type PersonaOutput struct {
	Personas []engram.Persona `json:"personas" jsonschema:"each speaker's facets (identity, relationships, preferences, tools, habits, activities, places, possessions, plans, health, pets) with their evidence and history"`
}

// VaultSearchInput is the input of the vault_search tool.
type VaultSearchInput struct {
	Query     string `json:"query" jsonschema:"what to look for in the Markdown vaults (ADRs, incident reviews, rules, notes)"`
	K         int    `json:"k,omitempty" jsonschema:"number of results, 1 to 200 (default 10)"`
	Namespace string `json:"namespace,omitempty" jsonschema:"the vaults' namespace, \"*\" for all (default \"default\")"`
}

// DocGraphInput is the input of the doc_graph tool.
type DocGraphInput struct {
	Doc   string `json:"doc" jsonschema:"the document: its path in the vault, its title, an alias, or a wiki-link name such as [[ADR-7]]"`
	Depth int    `json:"depth,omitempty" jsonschema:"how many links to follow, 1 to 6 (default 2)"`
	Vault string `json:"vault,omitempty" jsonschema:"the vault's folder (absolute); default any vault"`
}

// browseTools are the tools that browse the layers and the vaults.
var browseTools = []tool{{
	name: ToolScenes, title: "Scenes",
	description: "Browse the L2 scenes: stretches of one conversation on one topic, each with a title, a summary, " +
		"who took part and its turns. Use it to see what a conversation was about, or to find the discussion of a topic.",
	refine:   func(sc *schema) { sc.between("limit", 0, MaxLimit) },
	register: handler((*Server).scenes),
}, {
	name: ToolPersona, title: "Persona",
	description: "A speaker's L3 profile: identity, relationships, preferences, tools and habits, each with the " +
		"turns it stems from and how it changed. Without a speaker, every speaker of the namespace.",
	register: handler((*Server).persona),
}, {
	name: ToolVaultSearch, title: "Vault search",
	description: "Search the Markdown vaults only (ADRs, incident reviews, rules, notes): results of kind doc that " +
		"name their file, heading and lines. Use doc_graph to follow a result's links.",
	refine: func(sc *schema) {
		sc.minLength("query", 1)
		sc.between("k", 0, engram.MaxK)
	},
	register: handler((*Server).vaultSearch),
}, {
	name: ToolDocGraph, title: "Document graph",
	description: "The documents a vault document links to (by depth, with the one each was reached through), its " +
		"backlinks and its unresolved links: from an incident review to its ADR and rules. Fails with not_found for an unknown document.",
	refine: func(sc *schema) {
		sc.minLength("doc", 1)
		sc.between("depth", 0, engram.MaxGraphDepth)
	},
	register: handler((*Server).docGraph),
}}

func namespaceOrDefault(ns string) string {
	switch ns {
	case "":
		return engram.DefaultNamespace
	case engram.AllNamespaces:
		return ""
	}
	return ns
}

func (s *Server) scenes(ctx context.Context, in ScenesInput) (ScenesOutput, error) {
	if s.Layers == nil {
		return ScenesOutput{}, errNoLayers
	}
	if err := checkLimit(in.Limit); err != nil {
		return ScenesOutput{}, err
	}
	q := engram.SceneQuery{Namespace: namespaceOrDefault(in.Namespace), Session: in.Session, Text: in.Query, Limit: in.Limit}
	var err error
	if q.From, q.To, err = period(in.From, in.To); err != nil {
		return ScenesOutput{}, err
	}
	scenes, err := s.Layers.Scenes(ctx, q)
	return ScenesOutput{Scenes: nonNil(scenes)}, err
}

func (s *Server) persona(ctx context.Context, in PersonaInput) (PersonaOutput, error) {
	if s.Layers == nil {
		return PersonaOutput{}, errNoLayers
	}
	if in.Namespace == engram.AllNamespaces {
		return PersonaOutput{}, engram.FieldError("namespace", "a persona belongs to one namespace: name it (default \"default\")")
	}
	ps, err := s.Layers.Persona(ctx, namespaceOrDefault(in.Namespace), strings.TrimSpace(in.Speaker))
	return PersonaOutput{Personas: nonNil(ps)}, err
}

func (s *Server) vaultSearch(ctx context.Context, in VaultSearchInput) (engram.RecallResponse, error) {
	if strings.TrimSpace(in.Query) == "" {
		return engram.RecallResponse{}, engram.FieldError("query", "query is required")
	}
	ns := in.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	resp, err := s.Recall.Recall(ctx, engram.RecallRequest{Namespace: ns, Query: in.Query, K: in.K, Kinds: []string{engram.KindDoc}})
	resp.Results = nonNil(resp.Results)
	return resp, err
}

func (s *Server) docGraph(ctx context.Context, in DocGraphInput) (engram.DocGraph, error) {
	if s.Docs == nil {
		return engram.DocGraph{}, engram.Errorf(engram.EUNSUPPORTED, "the document graph is not available on this server")
	}
	if strings.TrimSpace(in.Doc) == "" {
		return engram.DocGraph{}, engram.FieldError("doc", "doc is required: a path in the vault, a title, an alias or [[name]]")
	}
	depth := in.Depth
	switch {
	case depth == 0:
		depth = engram.DefaultGraphDepth
	case depth < 1 || depth > engram.MaxGraphDepth:
		return engram.DocGraph{}, engram.FieldError("depth", "depth must be from 1 to %d, got %d", engram.MaxGraphDepth, depth)
	}
	return s.Docs.DocGraph(ctx, in.Vault, in.Doc, depth)
}
