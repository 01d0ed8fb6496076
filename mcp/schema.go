package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaOptions describe the root types whose JSON is not what their Go
// type suggests: json.RawMessage (a turn's meta) is a JSON object, not an
// array of bytes.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Types: []string{"null", "object"}},
}}

// schema is an inferred input schema being refined with what the Go types
// cannot say (enums, bounds).
type schema struct {
	s   *jsonschema.Schema
	err error
}

func (sc *schema) prop(name string) *jsonschema.Schema {
	p := sc.s.Properties[name]
	if p == nil && sc.err == nil {
		sc.err = fmt.Errorf("no property %q", name)
	}
	if p == nil {
		return &jsonschema.Schema{}
	}
	return p
}

func (sc *schema) enum(name string, values ...any) { sc.prop(name).Enum = values }

func (sc *schema) itemsEnum(name string, values ...any) {
	p := sc.prop(name)
	if p.Items == nil {
		p.Items = &jsonschema.Schema{Type: "string"}
	}
	p.Items.Enum = values
}

func (sc *schema) minLength(name string, n int) { sc.prop(name).MinLength = &n }

func (sc *schema) maxLength(name string, n int) { sc.prop(name).MaxLength = &n }

func (sc *schema) between(name string, lo, hi float64) {
	p := sc.prop(name)
	p.Minimum, p.Maximum = &lo, &hi
}

// add registers a typed tool with its input schema refined by refine (when
// set) and its output schema inferred with schemaOptions.
func add[In, Out any](srv *sdk.Server, t *sdk.Tool, refine func(*schema), h sdk.ToolHandlerFor[In, Out]) error {
	in, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		return fmt.Errorf("mcp: %s input schema: %w", t.Name, err)
	}
	if refine != nil {
		sc := &schema{s: in}
		refine(sc)
		if sc.err != nil {
			return fmt.Errorf("mcp: %s input schema: %w", t.Name, sc.err)
		}
	}
	out, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		return fmt.Errorf("mcp: %s output schema: %w", t.Name, err)
	}
	t.InputSchema, t.OutputSchema = in, out
	sdk.AddTool(srv, t, h)
	return nil
}
