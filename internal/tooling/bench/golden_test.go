package bench

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "write testdata/*.golden from the current code")

// The page, its task cost section and the terminal summary rendered from
// a saved report (as cmd/bench -from does, less the recount) are exactly
// the golden files: a change to the rendering shows up here.
func TestRenderGolden(t *testing.T) {
	for _, name := range []string{"full", "sparse"} {
		b, err := os.ReadFile("testdata/report-" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		doc, err := RenderDoc(r)
		if err != nil {
			t.Fatal(err)
		}
		cost, err := TaskCostSection(r)
		if err != nil {
			t.Fatal(err)
		}
		for file, got := range map[string]string{
			name + "-PERFORMANCE.md": doc, name + "-taskcost.md": cost, name + "-summary.txt": Summary(r),
		} {
			path := "testdata/" + file + ".golden"
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (go test -run TestRenderGolden -update to accept); first difference at byte %d",
					file, firstDiff(got, string(want)))
			}
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
