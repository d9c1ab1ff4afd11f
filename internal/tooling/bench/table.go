package bench

import (
	"slices"
	"strings"
)

// Table is a Markdown table.
type Table struct {
	Header []string
	Rows   [][]string
}

// cells is row r with one cell per column of the header.
func (t Table) cells(r []string) []string {
	c := make([]string, len(t.Header))
	copy(c, r)
	return c
}

// Markdown renders t as a GitHub Markdown table; a "|" in a cell is
// escaped.
func (t Table) Markdown() string {
	var b strings.Builder
	for _, r := range append([][]string{t.Header, slices.Repeat([]string{"---"}, len(t.Header))}, t.Rows...) {
		for _, c := range t.cells(r) {
			b.WriteString("| " + strings.ReplaceAll(c, "|", `\|`) + " ")
		}
		b.WriteString("|\n")
	}
	return b.String()
}

// Text renders t with aligned columns for a terminal.
func (t Table) Text() string {
	all := append([][]string{t.Header}, t.Rows...)
	width := make([]int, len(t.Header))
	for _, r := range all {
		for i, c := range t.cells(r) {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range all {
		for i, c := range t.cells(r) {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len(c)))
		}
		b.WriteString("\n")
	}
	return b.String()
}
