// Package report formats what cuzk's benchmark commands print: text tables
// aligned for a terminal. The numbers in them come from internal/stats.
package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Table collects rows of cells and writes them aligned under a header.
type Table struct {
	header []string
	rows   [][]string
}

// NewTable starts a table with the given column headers.
func NewTable(header ...string) *Table { return &Table{header: header} }

// Add appends one row (one cell per column).
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Write prints the header, a rule of dashes and the rows: the first column
// left-aligned, the others right-aligned, two spaces apart. Widths count
// runes, so labels such as "L‖H" align.
func (t *Table) Write(w io.Writer) error {
	width := make([]int, len(t.header))
	all := append([][]string{t.header}, t.rows...)
	for _, r := range all {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				l.WriteString(c + pad)
			} else {
				l.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.header)
	rule := make([]string, len(width))
	for i := range rule {
		rule[i] = strings.Repeat("-", width[i])
	}
	line(rule)
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
