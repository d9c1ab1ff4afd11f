package gofn

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestTryBundle: with a Go toolchain the local bundling builds an arm64
// bootstrap; without one it declines, so CDK falls back to Docker.
func TestTryBundle(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("these tests need the go command")
	}
	t.Cleanup(removeBatches)
	for _, tc := range []struct {
		name      string
		path      string
		want      bool
		wantBuilt bool
	}{
		{"go on PATH builds", filepath.Dir(goBin), true, true},
		{"no go falls back to docker", t.TempDir(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			out := t.TempDir()
			b := &localBundling{root: ModuleRoot(), entry: "lambdas/presignup"}
			if got := *b.TryBundle(jsii.String(out), nil); got != tc.want {
				t.Fatalf("TryBundle = %v, want %v", got, tc.want)
			}
			st, err := os.Stat(filepath.Join(out, "bootstrap"))
			if built := err == nil && st.Size() > 0; built != tc.wantBuilt {
				t.Fatalf("bootstrap built = %v, want %v", built, tc.wantBuilt)
			}
			if tc.wantBuilt {
				b, _ := os.ReadFile(filepath.Join(out, "bootstrap"))
				// ELF, 64-bit, little endian, machine EM_AARCH64 (183).
				if string(b[:4]) != "\x7fELF" || b[18] != 183 {
					t.Fatalf("bootstrap is not a linux/arm64 ELF binary")
				}
			}
		})
	}
}

func TestModuleRootHoldsTheLambdas(t *testing.T) {
	if _, err := os.Stat(filepath.Join(ModuleRoot(), "lambdas", "fire", "main.go")); err != nil {
		t.Fatalf("ModuleRoot() = %s: %v", ModuleRoot(), err)
	}
}

// TestBatchBinariesAreBuildsOwn: the one `go build` of every function
// package gives, for each, the same bytes as building it alone (so asset
// hashes do not change), and an entry outside the batch is built alone.
func TestBatchBinariesAreBuildsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function twice")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("these tests need the go command")
	}
	root := ModuleRoot()
	b := &batch{}
	for _, entry := range []string{"lambdas/presignup", "lambdas/cancelworker", "internal/tooling/bench/refs/bare"} {
		t.Run(entry, func(t *testing.T) {
			alone := filepath.Join(t.TempDir(), "bootstrap")
			if err := Build(goBin, root, entry, alone); err != nil {
				t.Fatal(err)
			}
			bin, _ := b.take(goBin, root, entry)
			inBatch := filepath.Dir(entry) == BatchDir
			if (bin != "") != inBatch {
				t.Fatalf("take(%s) = %q: want a binary only for packages under %s", entry, bin, BatchDir)
			}
			if !inBatch {
				return
			}
			want, _ := os.ReadFile(alone)
			got, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("batch binary of %s (%d bytes) differs from its own build (%d bytes)", entry, len(got), len(want))
			}
			if again, _ := b.take(goBin, root, entry); again != "" {
				t.Fatalf("take(%s) handed the binary out twice", entry)
			}
		})
	}
	os.RemoveAll(b.dir)
}

// removeBatches removes the batch folders this test process built.
func removeBatches() {
	batches.Lock()
	defer batches.Unlock()
	for _, b := range batches.m {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
}
