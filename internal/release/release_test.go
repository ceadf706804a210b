package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// root is the repository root, from this package's directory.
var root = filepath.Join("..", "..")

// goreleaserVersion is the GoReleaser .ci/run installs and the test runs.
const goreleaserVersion = "v2.15.1"

type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Formats         []string `yaml:"formats"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

func readGoreleaser(t *testing.T) *goreleaserConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(c.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %d builds, want 1", len(c.Builds))
	}
	return &c
}

// TestGoreleaserCheck runs goreleaser check on .goreleaser.yaml: the goreleaser on PATH when it
// is the pinned version, else go run of the pinned module when the module cache has it (offline:
// GOPROXY=off); skipped when neither.
func TestGoreleaserCheck(t *testing.T) {
	var cmd *exec.Cmd
	if p, err := exec.LookPath("goreleaser"); err == nil {
		if out, _ := exec.Command(p, "--version").CombinedOutput(); strings.Contains(string(out), strings.TrimPrefix(goreleaserVersion, "v")) {
			cmd = exec.Command(p, "check", "--config", ".goreleaser.yaml")
		}
	}
	if cmd == nil {
		if testing.Short() {
			t.Skip("no goreleaser " + goreleaserVersion + " on PATH, and go run builds it")
		}
		cmd = exec.Command("go", "run", "github.com/goreleaser/goreleaser/v2@"+goreleaserVersion, "check", "--config", ".goreleaser.yaml")
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	}
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.Args[0] == "go" && bytes.Contains(out, []byte("GOPROXY=off")) {
		t.Skipf("the module cache lacks goreleaser %s (go install github.com/goreleaser/goreleaser/v2@%s):\n%s", goreleaserVersion, goreleaserVersion, out)
	}
	if err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("1 configuration file(s) validated")) && !bytes.Contains(out, []byte("config is valid")) {
		t.Errorf("goreleaser check said:\n%s", out)
	}
}

// TestGoreleaserBuilds checks the release matrix and the static, stamped build.
func TestGoreleaserBuilds(t *testing.T) {
	c := readGoreleaser(t)
	b := c.Builds[0]
	if c.Version != 2 || b.Main != "./cmd/mcpspec" || b.Binary != "mcpspec" {
		t.Errorf("version %d, main %q, binary %q", c.Version, b.Main, b.Binary)
	}
	slices.Sort(b.Goos)
	slices.Sort(b.Goarch)
	if !slices.Equal(b.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("goos %v × goarch %v, want darwin, linux, windows × amd64, arm64", b.Goos, b.Goarch)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("env %v, flags %v: want a static build (CGO_ENABLED=0) with -trimpath", b.Env, b.Flags)
	}
	if len(c.Archives) == 0 || c.Checksum.NameTemplate == "" {
		t.Errorf("archives %v, checksum %+v", c.Archives, c.Checksum)
	}
}

// TestLinkFlagsStampVersionAndCommit builds mcpspec with .goreleaser.yaml's flags (templates
// filled in as GoReleaser would for tag v9.8.7) and checks mcpspec version --json: an -X of
// a variable that does not exist is silently ignored by the linker.
func TestLinkFlagsStampVersionAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpspec")
	}
	b := readGoreleaser(t).Builds[0]
	ld := strings.Join(b.Ldflags, " ")
	ld = strings.NewReplacer("{{ .Version }}", "9.8.7", "{{ .FullCommit }}", "0123456789abcdef0123456789abcdef01234567").Replace(ld)
	if strings.Contains(ld, "{{") {
		t.Fatalf("a template this test does not fill in: %s", ld)
	}
	// Only the link flags: the config's -trimpath and CGO_ENABLED=0 would change every
	// package's build cache key and make this a cold build of the whole module (minutes);
	// TestGoreleaserBuilds checks them.
	bin := filepath.Join(t.TempDir(), "mcpspec")
	cmd := exec.Command("go", "build", "-ldflags", ld, "-o", bin, b.Main)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Version, Commit string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Version != "v9.8.7" || v.Commit != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("mcpspec version --json = %s, want version v9.8.7 and the commit", out)
	}
}

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	Line int
	Cmd  string
	Args string
}

// parseDockerfile splits a Dockerfile into instructions (comments dropped, \ continuations
// joined) and returns the comments apart.
func parseDockerfile(src string) (ins []instruction, comments []string) {
	sc := bufio.NewScanner(strings.NewReader(src))
	var cur *instruction
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			comments = append(comments, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		if line == "" && cur == nil {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		line = strings.TrimSuffix(line, "\\")
		if cur == nil {
			cmd, args, _ := strings.Cut(line, " ")
			ins = append(ins, instruction{Line: n, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
			cur = &ins[len(ins)-1]
		} else {
			cur.Args += " " + line
		}
		if !cont {
			cur = nil
		}
	}
	return ins, comments
}

var space = regexp.MustCompile(`\s+`)

// TestDockerfile checks what can be checked without docker: a multi-stage build whose go build
// is static and uses GoReleaser's flags; a final stage with a shell (the Kubernetes Job runs
// sh -c), a non-root USER and ENTRYPOINT mcpspec; and the image name of its build command is
// the image every Kubernetes manifest of examples/kubernetes runs.
func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ins, comments := parseDockerfile(string(src))
	var stages [][]instruction
	for _, in := range ins {
		if in.Cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				t.Fatalf("line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build", len(stages))
	}

	// The build stage: CGO_ENABLED=0 and GoReleaser's flags.
	gr := readGoreleaser(t).Builds[0]
	var build string
	static := false
	for _, in := range stages[0] {
		if in.Cmd == "ENV" && space.ReplaceAllString(in.Args, " ") == "CGO_ENABLED=0" {
			static = true
		}
		if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			build = space.ReplaceAllString(in.Args, " ")
			if !static {
				t.Errorf("line %d: go build before ENV CGO_ENABLED=0", in.Line)
			}
		}
	}
	if build == "" {
		t.Fatal("the first stage runs no go build")
	}
	for _, f := range gr.Flags {
		if !strings.Contains(build, " "+f+" ") {
			t.Errorf("go build lacks GoReleaser's flag %s: %s", f, build)
		}
	}
	xvars := regexp.MustCompile(`-X (\S+?)=`)
	want := xvars.FindAllStringSubmatch(strings.Join(gr.Ldflags, " "), -1)
	got := xvars.FindAllStringSubmatch(build, -1)
	if len(want) == 0 || len(got) != len(want) {
		t.Errorf("-X variables: Dockerfile %v, .goreleaser.yaml %v", got, want)
	}
	for i := range min(len(got), len(want)) {
		if got[i][1] != want[i][1] {
			t.Errorf("-X %s in the Dockerfile, %s in .goreleaser.yaml", got[i][1], want[i][1])
		}
	}
	if !strings.Contains(build, "-s -w") || !strings.HasSuffix(build, gr.Main) {
		t.Errorf("go build %q: want -s -w and %s", build, gr.Main)
	}

	// The final stage.
	final := stages[len(stages)-1]
	base := strings.Fields(final[0].Args)[0]
	if base == "scratch" || strings.Contains(base, "distroless") && !strings.Contains(base, "debug") {
		t.Errorf("final base %s has no shell; the Kubernetes Job runs sh -c", base)
	}
	user, entry := "", ""
	for _, in := range final {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "ENTRYPOINT":
			entry = in.Args
		}
	}
	name, _, _ := strings.Cut(user, ":")
	if name == "" || name == "root" || name == "0" {
		t.Errorf("final stage USER %q: want a non-root user", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entry), &ep); err != nil || len(ep) == 0 || filepath.Base(ep[0]) != "mcpspec" {
		t.Errorf("ENTRYPOINT %s: want the exec form running mcpspec", entry)
	}

	// The image name: docker build -t NAME in the Dockerfile's usage, the image in the manifests.
	var image string
	for _, c := range comments {
		if m := regexp.MustCompile(`docker build -t (\S+)`).FindStringSubmatch(c); m != nil {
			image = m[1]
		}
	}
	if image == "" {
		t.Fatal("the Dockerfile's comments show no docker build -t NAME")
	}
	manifests, _ := filepath.Glob(filepath.Join(root, "examples", "kubernetes", "*.yaml"))
	n := 0
	for _, m := range manifests {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range regexp.MustCompile(`(?m)^\s*image:\s*(\S+)`).FindAllSubmatch(b, -1) {
			n++
			if string(img[1]) != image {
				t.Errorf("%s: image %s, but the Dockerfile builds %s", filepath.Base(m), img[1], image)
			}
		}
	}
	if n == 0 {
		t.Error("no image: in examples/kubernetes/*.yaml")
	}
}
