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

// Markdown renders t as a GitHub Markdown table; a "|" in a cell is
// escaped.
func (t Table) Markdown() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for i := range t.Header {
			c := ""
			if i < len(cells) {
				c = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	row(slices.Repeat([]string{"---"}, len(t.Header)))
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// Text renders t with aligned columns for a terminal.
func (t Table) Text() string {
	width := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.Rows...)
	for _, r := range all {
		for i := range width {
			if i < len(r) && len(r[i]) > width[i] {
				width[i] = len(r[i])
			}
		}
	}
	var b strings.Builder
	for _, r := range all {
		for i := range width {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len(c)))
			if i < len(width)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
