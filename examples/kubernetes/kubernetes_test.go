// Package kubernetes_test checks the example manifests: they decode strictly into the
// Kubernetes API types, the shard count agrees everywhere, and the mcpspec commands parse.
package kubernetes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func decode[T any](t *testing.T, file string) *T {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("%s does not decode strictly into %T: %v", file, v, err)
	}
	return &v
}

func TestManifests(t *testing.T) {
	pvc := decode[corev1.PersistentVolumeClaim](t, "pvc.yaml")
	load := decode[batchv1.Job](t, "load-job.yaml")
	merge := decode[batchv1.Job](t, "merge-job.yaml")

	if pvc.Kind != "PersistentVolumeClaim" || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the claim must be shared by every pod: %+v", pvc.Spec.AccessModes)
	}
	s := load.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("the load job must be Indexed (it sets JOB_COMPLETION_INDEX)")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Fatal("every shard must run at once: completions = parallelism")
	}
	n := int(*s.Completions)
	for _, job := range []*batchv1.Job{load, merge} {
		vols := job.Spec.Template.Spec.Volumes
		if len(vols) != 1 || vols[0].PersistentVolumeClaim == nil || vols[0].PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("%s does not mount claim %s", job.Name, pvc.Name)
		}
		if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s restarts its pods: a load run must not be repeated silently", job.Name)
		}
	}

	c := load.Spec.Template.Spec.Containers[0]
	script := strings.Join(c.Args, " ")
	if got := regexp.MustCompile(`--shard "\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)/(\d+)"`).FindStringSubmatch(script); got == nil || got[1] != fmt.Sprint(n) {
		t.Fatalf("--shard must be $((JOB_COMPLETION_INDEX + 1))/%d: %q", n, script)
	}
	mc := merge.Spec.Template.Spec.Containers[0].Command
	var parts []string
	for _, a := range mc {
		if strings.HasPrefix(a, "/runs/shard-") {
			parts = append(parts, a)
		}
	}
	if len(parts) != n {
		t.Errorf("the merge lists %d shards, the load job runs %d", len(parts), n)
	}

	// Each shard's command line, as its shell would expand it, parses: --explain prints the plan
	// and exits 0 without connecting.
	for i := 1; i <= n; i++ {
		line := strings.TrimPrefix(strings.ReplaceAll(script, "$((JOB_COMPLETION_INDEX + 1))", fmt.Sprint(i)), "exec ")
		args, err := spec.Split(line)
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), append(args, "--explain"), &cli.IO{Stdout: &out, Stderr: &errb})
		if code != 0 || !strings.Contains(out.String(), "mcpspec load --scenario sustained") {
			t.Errorf("shard %d: %q exits %d: %s", i, line, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := cli.Run(context.Background(), []string{"mcpspec", "merge", "--help"}, &cli.IO{Stdout: &out, Stderr: &errb}); code != 0 {
		t.Errorf("mcpspec merge --help exits %d", code)
	}
}
