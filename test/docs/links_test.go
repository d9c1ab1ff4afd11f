package docs

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title"). Reference-style links are not used in the docs.
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// TestRelativeLinksResolve: every relative link of README.md,
// CHANGELOG.md, docs/*.md and constructs/*/README.md names a tracked file or folder, and a
// #fragment of a Markdown page names one of its headings (GitHub's
// anchors), so a page that moves cannot leave a dead link behind.
func TestRelativeLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	exists := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		for d := f; d != "."; d = path.Dir(d) {
			exists[d] = true
		}
	}
	var pages []string
	for f := range exists {
		if f == "README.md" || f == "CHANGELOG.md" || (path.Dir(f) == "docs" && strings.HasSuffix(f, ".md")) ||
			(strings.HasPrefix(f, "constructs/") && strings.Count(f, "/") == 2 && path.Base(f) == "README.md") {
			pages = append(pages, f)
		}
	}
	if len(pages) < 3 {
		t.Fatalf("found %d pages to check (%v); did the docs move?", len(pages), pages)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(b))
		return anchors[page]
	}
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range outsideCode(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = path.Clean(path.Join(path.Dir(page), file))
					if !exists[dest] {
						t.Errorf("%s:%d: link %q: %s is not a file of the repository", page, i+1, target, dest)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s", page, i+1, target, dest, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no relative link; did the link syntax change?")
	}
	t.Logf("checked %d relative links in %d pages", checked, len(pages))
}

// outsideCode returns md's lines with those inside fenced code blocks
// blanked, so a line's index is still its line number minus one.
func outsideCode(md string) []string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			for _, c := range trimmed[3:] {
				if string(c) != fence[:1] {
					break
				}
				fence += string(c)
			}
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// explicitAnchor is an HTML anchor, <a id="x"></a>, which keeps an old
// link working where a section moved to another page.
var explicitAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)

// headingAnchors are the anchors GitHub gives md's headings: lower case,
// spaces to hyphens, punctuation other than - and _ dropped, and -1, -2,
// ... after a repeated one; and md's explicit <a id> anchors.
func headingAnchors(md string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range outsideCode(md) {
		for _, m := range explicitAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		text, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " ")
		if !ok || !strings.HasPrefix(l, "#") {
			continue
		}
		a := anchor(text)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestAnchors: headings get GitHub's anchors, repeated ones numbered, and
// a "#" inside a code block is no heading.
func TestAnchors(t *testing.T) {
	md := "# Expiry: the guarantee\n## The reconciler's bound\n### Props (`CampaignsProps`)\n## Tests\n## Tests\n```sh\n# not a heading\n```\n| <a id=\"moved\"></a>[x](x.md) |\n"
	got := headingAnchors(md)
	for _, want := range []string{"expiry-the-guarantee", "the-reconcilers-bound", "props-campaignsprops", "tests", "tests-1", "moved"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block made an anchor: %v", got)
	}
}
