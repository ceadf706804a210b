package tokens

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/analyze/inventory"
)

var updateTexts = flag.Bool("update-texts", false, "rewrite the texts of testdata/reference.json (counts become -1: run testdata/reference.cjs next)")

// referencePath holds texts with their token counts by the reference tokenizer (OpenAI's
// tiktoken, Rust, as the npm package tiktoken ships it compiled to WebAssembly), written by
// testdata/reference.cjs; interop's TestTokensReference recomputes them with it.
var referencePath = filepath.Join("testdata", "reference.json")

// referenceEntry is one text and its reference counts per encoding.
type referenceEntry struct {
	Label  string           `json:"label"`
	Text   string           `json:"text"`
	Counts map[Encoding]int `json:"counts"`
}

// referenceTexts are the texts the counter is checked on: every tool entry of the reference
// servers' inventories as compact JSON, with its core and its parts, their instructions, and
// texts chosen to hit the tokenizer's corners.
func referenceTexts(t *testing.T) []referenceEntry {
	t.Helper()
	var out []referenceEntry
	add := func(label, text string) {
		if text != "" {
			out = append(out, referenceEntry{Label: label, Text: text})
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "inventory", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no inventories: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var inv inventory.Inventory
		if err := json.Unmarshal(data, &inv); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		add(server+" instructions", inv.Instructions)
		for _, tl := range inv.Tools {
			var full bytes.Buffer
			if err := json.Compact(&full, tl.Raw); err != nil {
				t.Fatal(err)
			}
			members, err := objectMembers(full.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			var core []string
			for _, m := range members {
				if m.key == "name" || m.key == "description" || m.key == "inputSchema" {
					core = append(core, string(m.raw))
				} else {
					add(server+" "+tl.Name+" field "+m.key, string(m.raw))
				}
			}
			add(server+" "+tl.Name+" full", full.String())
			add(server+" "+tl.Name+" core", "{"+strings.Join(core, ",")+"}")
			add(server+" "+tl.Name+" name", tl.Name)
			add(server+" "+tl.Name+" description", tl.Description)
			add(server+" "+tl.Name+" inputSchema", string(memberValue(members, "inputSchema")))
		}
	}
	long := strings.Repeat("Reads a file from the allowed directories and returns its text.\nUse it when the user asks about a file. ", 40)
	for label, text := range map[string]string{
		"special tokens as text":   "<|endoftext|> and <|fim_prefix|> are plain text here <|endofprompt|>",
		"emoji and ZWJ":            "family 👨‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin tones 👍🏽 and a heart ❤️",
		"CJK and accents":          "日本語の説明文です。中文描述。한국어 설명. Déjà vu, naïve façade, Straße.",
		"contractions and case":    "It's DON'T we'll I'M they've HE'D you're 'tis",
		"digits":                   "12345678901234567890 3.14159 1e-10 0x1F 2026-07-28",
		"blank runs":               "a  b   c\t\td\n\n\ne \r\n f   \n  \n g    ",
		"slashes after newlines":   "see:\n/path/to\n//comment\n/",
		"long prose with newlines": long,
		"long JSON schema":         `{"type":"object","properties":{` + strings.Repeat(`"field_name":{"type":"string","description":"a field with a long description that goes on and on"},`, 30) + `"last":{"type":"integer"}}}`,
		"long unbroken letters":    strings.Repeat("a", 3000),
		"tiktoken-go deviation: blank and newline run": strings.Repeat(" \n", 1500),
		"tiktoken-go deviation: indented blank line":   "Args:\n    path: where\n    \n    Returns the text",
		"escaped unicode in JSON":                      `{"description":"caf\u00e9 \u2028 \ud83d\ude00"}`,
		"DEL and other controls":                       "a\x7fb \x7f\x7f .\x7f\n\x7f1 \x00\x01\x02 \x1b[31mred\x1b[0m",
	} {
		add(label, text)
	}
	return out
}

func loadReference(t *testing.T) []referenceEntry {
	t.Helper()
	data, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	var ref []referenceEntry
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestUpdateReferenceTexts(t *testing.T) {
	if !*updateTexts {
		t.Skip("-update-texts not set")
	}
	texts := referenceTexts(t)
	for i := range texts {
		texts[i].Counts = map[Encoding]int{O200kBase: -1, Cl100kBase: -1}
	}
	data, err := json.MarshalIndent(texts, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(referencePath, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
