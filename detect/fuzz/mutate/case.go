package mutate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// Family names a kind of generated case.
type Family string

// The families. Every one but [Schema] and [BeforeInit] sends frames on an initialized session.
const (
	// MalformedJSON: syntax errors, values that are JSON but not objects, trailing garbage.
	MalformedJSON Family = "malformed-json"
	// Truncated: a well-formed request cut short.
	Truncated Family = "truncated"
	// InvalidUTF8: invalid byte sequences inside a request.
	InvalidUTF8 Family = "invalid-utf8"
	// ControlChars: raw and escaped control characters, embedded line breaks.
	ControlChars Family = "control-chars"
	// HugeFrame: requests of hundreds of KiB to MiB (long strings, many members, long names).
	HugeFrame Family = "huge-frame"
	// DeepNesting: params nested tens to a hundred thousand levels deep.
	DeepNesting Family = "deep-nesting"
	// WrongJSONRPC: a jsonrpc member that is missing or not "2.0".
	WrongJSONRPC Family = "wrong-jsonrpc"
	// BadMethod: unknown methods, and methods that are numbers, null or structures.
	BadMethod Family = "bad-method"
	// BadParams: params that are null, strings, numbers or arrays, and objects whose members
	// have the wrong types or name nothing that exists.
	BadParams Family = "bad-params"
	// BadID: duplicate, huge, fractional, null, structured and string ids; unsolicited responses.
	BadID Family = "bad-id"
	// Batch: JSON-RPC batches, empty, nested, mixed and large.
	Batch Family = "batch"
	// NotificationID: notifications that carry an id.
	NotificationID Family = "notification-id"
	// BeforeInit: requests on a fresh connection before initialize.
	BeforeInit Family = "before-initialize"
	// Schema: tools/call with arguments derived from each tool's inputSchema, then mutated.
	Schema Family = "schema"
)

// Families lists every family in a fixed order.
func Families() []Family {
	return []Family{MalformedJSON, Truncated, InvalidUTF8, ControlChars, HugeFrame, DeepNesting, WrongJSONRPC,
		BadMethod, BadParams, BadID, Batch, NotificationID, BeforeInit, Schema}
}

// ParseFamilies checks names against [Families]; empty means all.
func ParseFamilies(names []string) ([]Family, error) {
	if len(names) == 0 {
		return Families(), nil
	}
	var out []Family
	for _, n := range names {
		f := Family(n)
		if !slices.Contains(Families(), f) {
			return nil, &UnknownFamilyError{Name: n}
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// UnknownFamilyError is a family name that is not one of [Families].
type UnknownFamilyError struct{ Name string }

// Error implements error.
func (e *UnknownFamilyError) Error() string {
	return "unknown fuzz family " + strconv.Quote(e.Name)
}

// IDToken stands for a request id in a generated frame: the sender replaces it with an id it
// reserved, so every request of a session gets its own.
const IDToken = "@ID@"

// Case is one generated input: frames sent in order on a session (or, for [BeforeInit], on a
// fresh connection), or a tools/call of one tool with generated arguments ([Schema]).
type Case struct {
	// N numbers the case from 1, in generation order.
	N      int
	Family Family
	// Kind is the mutation within the family ("lone-surrogate", "missing-required" …).
	Kind string
	// What describes the case in a few words.
	What string
	// Frames are the frames to send, with [IDToken] where a reserved id goes.
	Frames [][]byte
	// Tool and Args are the tools/call of a [Schema] case.
	Tool string
	Args json.RawMessage
	// Slot is the property path the mutation set, nil when it removed one or replaced the
	// whole arguments; minimisation keeps it.
	Slot []string
	// Progress says the tools/call carries a progressToken in params._meta: schema cases
	// alternate, since a handler may read the token and fail with or without it.
	Progress bool
	// Valid says whether Args satisfy the tool's inputSchema; ValidKnown whether that could be
	// decided (the schema compiled).
	Valid, ValidKnown bool
}

// WithID returns frame with every [IDToken] replaced by id.
func WithID(frame []byte, id int64) []byte {
	if !bytes.Contains(frame, []byte(IDToken)) {
		return frame
	}
	return bytes.ReplaceAll(frame, []byte(IDToken), strconv.AppendInt(nil, id, 10))
}
