package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// format is a parsed --output.
type format struct {
	kind    string   // table, wide, json, yaml, columns
	columns []string // of columns=a,b
}

func parseOutput(s string) (format, error) {
	switch s {
	case "", "table":
		return format{kind: "table"}, nil
	case "wide", "json", "yaml":
		return format{kind: s}, nil
	}
	if cols, ok := strings.CutPrefix(s, "columns="); ok && cols != "" {
		var f format
		f.kind = "columns"
		for c := range strings.SplitSeq(cols, ",") {
			if c = strings.TrimSpace(strings.ToLower(c)); c != "" {
				f.columns = append(f.columns, c)
			}
		}
		return f, nil
	}
	return format{}, fmt.Errorf("unknown output %q: want table, wide, json, yaml or columns=a,b,...", s)
}

// column is one column of a table of T.
type column[T any] struct {
	name  string // lower case; printed upper case
	wide  bool   // only in -o wide (and columns=)
	value func(T) string
}

// view says how a resource of type T is shown.
type view[T any] struct {
	columns []column[T]
	id      func(T) string // what --quiet prints
}

func (v view[T]) pick(f format) ([]column[T], error) {
	var out []column[T]
	switch f.kind {
	case "columns":
		for _, name := range f.columns {
			found := false
			for _, c := range v.columns {
				if c.name == name {
					out, found = append(out, c), true
					break
				}
			}
			if !found {
				var names []string
				for _, c := range v.columns {
					names = append(names, c.name)
				}
				return nil, fmt.Errorf("unknown column %q: want some of %s", name, strings.Join(names, ","))
			}
		}
	default:
		for _, c := range v.columns {
			if !c.wide || f.kind == "wide" {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// printList prints items: JSON and YAML exactly as the API's data list, the other
// formats as a table.
func printList[T any](g *globals, v view[T], items []T) error {
	f, err := parseOutput(g.output)
	if err != nil {
		return err
	}
	if items == nil {
		items = []T{}
	}
	if done, err := printData(g.stdout, f, items); done {
		return err
	}
	if g.quiet {
		for _, it := range items {
			fmt.Fprintln(g.stdout, escape(v.id(it)))
		}
		return nil
	}
	cols, err := v.pick(f)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 0, 3, ' ', 0)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = strings.ToUpper(c.name)
	}
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	for _, it := range items {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = cell(c.value(it))
		}
		fmt.Fprintln(tw, strings.Join(vals, "\t"))
	}
	return tw.Flush()
}

// printOne prints one resource: JSON and YAML exactly as the API's data object, the
// table formats as one "NAME: value" line per column.
func printOne[T any](g *globals, v view[T], item T) error {
	f, err := parseOutput(g.output)
	if err != nil {
		return err
	}
	if done, err := printData(g.stdout, f, item); done {
		return err
	}
	if g.quiet {
		_, err := fmt.Fprintln(g.stdout, escape(v.id(item)))
		return err
	}
	if f.kind == "table" {
		f.kind = "wide" // one resource: every field
	}
	cols, err := v.pick(f)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	for _, c := range cols {
		fmt.Fprintf(tw, "%s:\t%s\n", c.name, cell(c.value(item)))
	}
	return tw.Flush()
}

// printData prints data as JSON or YAML when f asks for it. Both say exactly what the
// API said, with every character that could act on a terminal escaped in their own
// syntax (escapeJSON; the YAML encoder writes the controls that reach it so as \e,
// \x9B), except the bidi controls, which YAML shows as they are.
func printData(w io.Writer, f format, data any) (bool, error) {
	switch f.kind {
	case "json":
		b, err := json.MarshalIndent(data, "", "  ")
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintf(w, "%s\n", escapeJSON(b))
		return true, err
	case "yaml":
		b, err := json.Marshal(data)
		if err != nil {
			return true, err
		}
		// The YAML decoder under JSONToYAML refuses a raw DEL or C1 control, even in a
		// JSON string; escaped, it reads them.
		y, err := yaml.JSONToYAML(escapeJSON(b))
		if err != nil {
			return true, err
		}
		_, err = w.Write(y)
		return true, err
	}
	return false, nil
}

// cell keeps a table cell on one line, its tabs and newlines as spaces and the rest of
// what could act on a terminal escaped (escape); an empty one shows "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return escape(strings.NewReplacer("\t", " ", "\n", " ").Replace(s))
}

var errNameNotFound = errors.New("not found")
