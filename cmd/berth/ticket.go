package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// Support tickets (docs/api.md, Support): the account's questions to the operator's
// staff. A ticket is named by its id alone; its subject and messages are anyone's
// with a token of the account, or staff's, and are escaped as every answer is.

var tickets = &resource[api.Ticket]{
	name: "ticket", short: "Support tickets: ask the operator's staff, read their answers", noun: "ticket", arg: "TICKET",
	view: ticketView,
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Ticket, error) {
		return allTickets(ctx, c, "")
	},
	id:       func(t api.Ticket) int64 { return t.ID },
	listHelp: "List the account's tickets, latest activity first",
	listUse:  "[--status STATUS]",
	listFlags: func(cmd *cobra.Command) func(ctx context.Context, c *client.Client, _ string) ([]api.Ticket, error) {
		var status string
		cmd.Flags().StringVar(&status, "status", "", "only the tickets in this status: open, answered, customer_reply, closed")
		return func(ctx context.Context, c *client.Client, _ string) ([]api.Ticket, error) {
			return allTickets(ctx, c, status)
		}
	},
}

func allTickets(ctx context.Context, c *client.Client, status string) ([]api.Ticket, error) {
	var out []api.Ticket
	for t, err := range c.AllTickets(ctx, client.TicketListOptions{Status: status}) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

var ticketView = view[api.Ticket]{
	id: func(t api.Ticket) string { return i64(t.ID) },
	columns: []column[api.Ticket]{
		{name: "id", value: func(t api.Ticket) string { return i64(t.ID) }},
		{name: "subject", value: func(t api.Ticket) string { return t.Subject }},
		{name: "status", value: func(t api.Ticket) string { return t.Status }},
		{name: "priority", value: func(t api.Ticket) string { return t.Priority }},
		{name: "updated_at", value: func(t api.Ticket) string { return ts(t.UpdatedAt) }},
		{name: "server_id", wide: true, value: func(t api.Ticket) string { return optID(t.ServerID) }},
		{name: "created_at", wide: true, value: func(t api.Ticket) string { return ts(t.CreatedAt) }},
		{name: "closed_at", wide: true, value: func(t api.Ticket) string {
			if t.ClosedAt == nil {
				return ""
			}
			return ts(*t.ClosedAt)
		}},
	},
}

var messageView = view[api.TicketMessage]{
	id: func(m api.TicketMessage) string { return i64(m.ID) },
	columns: []column[api.TicketMessage]{
		{name: "id", value: func(m api.TicketMessage) string { return i64(m.ID) }},
		{name: "author", value: func(m api.TicketMessage) string { return m.Author }},
		{name: "author_name", value: func(m api.TicketMessage) string { return m.AuthorName }},
		{name: "created_at", value: func(m api.TicketMessage) string { return ts(m.CreatedAt) }},
		{name: "attachments", value: func(m api.TicketMessage) string { return attachmentIDs(m.Attachments) }},
		{name: "body", value: func(m api.TicketMessage) string { return m.Body }},
	},
}

func attachmentIDs(as []api.Attachment) string {
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = i64(a.ID)
	}
	return strings.Join(ids, ",")
}

// printTicket prints a ticket with its thread: -o json and yaml the API's data; else
// its fields, then each message oldest first (author, time, body, its files by id,
// name and size); --quiet its id.
func printTicket(g *globals, t *api.Ticket) error {
	f, err := parseOutput(g.output)
	if err != nil {
		return err
	}
	if done, err := printData(g.stdout, f, t); done {
		return err
	}
	if g.quiet || f.kind == "columns" {
		return printOne(g, ticketView, *t)
	}
	if err := printOne(g, ticketView, *t); err != nil {
		return err
	}
	for _, m := range t.Messages {
		fmt.Fprintf(g.stdout, "\n--- %s (%s), %s, message %d\n", escape(m.Author), escape(m.AuthorName), ts(m.CreatedAt), m.ID)
		body := escapeText(m.Body)
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		fmt.Fprint(g.stdout, body)
		if len(m.Attachments) > 0 {
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			for _, a := range m.Attachments {
				fmt.Fprintf(tw, "attachment %d:\t%s\t%s\t%s\n", a.ID, cell(a.Filename), size(a.Size), cell(a.ContentType))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// size shows a file's size in bytes, KiB or MiB.
func size(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// messageFlags adds --body, --body-file and --attach to cmd; the function returns the
// body (the file's, of standard input for "-") and the files to attach, read before
// any is uploaded.
func messageFlags(cmd *cobra.Command) func(g *globals) (string, []localFile, error) {
	var body, bodyFile string
	var attach []string
	cmd.Flags().StringVar(&body, "body", "", "the message")
	cmd.Flags().StringVar(&bodyFile, "body-file", "", "the message from a file (- for standard input)")
	cmd.Flags().StringArrayVar(&attach, "attach", nil, "a file to attach: PNG, JPEG, PDF or plain text, 5 MiB at most (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("body", "body-file")
	cmd.MarkFlagsOneRequired("body", "body-file")
	_ = cmd.MarkFlagFilename("body-file")
	_ = cmd.MarkFlagFilename("attach")
	return func(g *globals) (string, []localFile, error) {
		if bodyFile != "" {
			text, err := readFileArg(g, bodyFile)
			if err != nil {
				return "", nil, fmt.Errorf("--body-file: %w", err)
			}
			body = text
		}
		files := make([]localFile, len(attach))
		for i, name := range attach {
			data, err := os.ReadFile(name)
			if err != nil {
				return "", nil, fmt.Errorf("--attach: %w", err)
			}
			files[i] = localFile{name: filepath.Base(name), data: data}
		}
		return body, files, nil
	}
}

// localFile is a file of --attach, read.
type localFile struct {
	name string
	data []byte
}

// contentType is what a file is declared as (client.AttachmentContentType).
func contentType(f localFile) string {
	return client.AttachmentContentType(filepath.Base(f.name), f.data)
}

// upload uploads files and returns their ids, noting each.
func upload(ctx context.Context, g *globals, c *client.Client, files []localFile) ([]int64, error) {
	var ids []int64
	for _, f := range files {
		a, err := c.UploadAttachment(ctx, bytes.NewReader(f.data), contentType(f), f.name)
		if err != nil {
			return nil, fmt.Errorf("uploading %s: %w", escape(f.name), err)
		}
		g.note("Uploaded %s as attachment %s (%s)\n", a.Filename, i64(a.ID), size(a.Size))
		ids = append(ids, a.ID)
	}
	return ids, nil
}

// ticketCmd is "berth ticket": create, list, describe, reply, close.
func ticketCmd(g *globals) *cobra.Command {
	var subject, priority, server string
	create := &cobra.Command{
		Use:   "create --subject S --body B|--body-file F [--priority P] [--server SERVER] [--attach FILE]...",
		Short: "Open a ticket; --attach uploads each file and attaches it",
		Args:  cobra.NoArgs,
	}
	createMsg := messageFlags(create)
	create.Flags().StringVar(&subject, "subject", "", "what it is about, one line of at most 120 characters")
	create.Flags().StringVar(&priority, "priority", "", "low, normal (the default), high or urgent")
	create.Flags().StringVar(&server, "server", "", "the server it is about")
	_ = create.MarkFlagRequired("subject")
	create.RunE = withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
		body, files, err := createMsg(g)
		if err != nil {
			return err
		}
		req := api.TicketCreate{Subject: &subject, Body: &body}
		if priority != "" {
			req.Priority = &priority
		}
		if server != "" {
			s, err := c.GetServer(ctx, server)
			if err != nil {
				return err
			}
			req.ServerID = api.Some(s.ID)
		}
		if req.AttachmentIDs, err = upload(ctx, g, c, files); err != nil {
			return err
		}
		t, err := c.CreateTicket(ctx, req)
		if err != nil {
			return err
		}
		g.note("Ticket %s opened\n", i64(t.ID))
		return printTicket(g, t)
	})

	describe := &cobra.Command{
		Use: "describe TICKET", Short: "Show a ticket and its messages, oldest first, with their files (berth attachment download ID)",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := tickets.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			t, err := c.GetTicket(ctx, id.id)
			if err != nil {
				return err
			}
			return printTicket(g, t)
		}),
	}

	reply := &cobra.Command{
		Use:   "reply TICKET --body B|--body-file F [--attach FILE]...",
		Short: "Write to a ticket (one closed less than 30 days ago is reopened); --attach uploads each file and attaches it",
		Args:  cobra.ExactArgs(1),
	}
	replyMsg := messageFlags(reply)
	reply.RunE = withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
		id, err := tickets.ref(ctx, c, "", args[0])
		if err != nil {
			return err
		}
		body, files, err := replyMsg(g)
		if err != nil {
			return err
		}
		req := api.TicketMessageCreate{Body: &body}
		if req.AttachmentIDs, err = upload(ctx, g, c, files); err != nil {
			return err
		}
		m, err := c.AddTicketMessage(ctx, id.id, req)
		if err != nil {
			return err
		}
		g.note("Message %s added to ticket %s\n", i64(m.ID), id.String())
		return printOne(g, messageView, *m)
	})

	closeCmd := &cobra.Command{
		Use: "close TICKET", Short: "Close a ticket; writing to it within 30 days reopens it", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := tickets.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			t, err := c.CloseTicket(ctx, id.id)
			if err != nil {
				return err
			}
			g.note("Ticket %s closed\n", id.String())
			f, err := parseOutput(g.output)
			if err != nil {
				return err
			}
			if done, err := printData(g.stdout, f, t); done {
				return err
			}
			return printOne(g, ticketView, *t)
		}),
	}
	return tickets.command(g, create, describe, reply, closeCmd)
}

// attachmentCmd is "berth attachment download".
func attachmentCmd(g *globals) *cobra.Command {
	var out string
	var force bool
	download := &cobra.Command{
		Use: "download ID [-o FILE|DIR|-] [--force]",
		Short: "Download a ticket's file: to FILE, into DIR, to standard output (-), or by default into the current directory " +
			"under the name Berth gives it; an existing file is kept unless --force",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, ok := asID(args[0])
			if !ok {
				return fmt.Errorf("attachment %q: want a numeric id", args[0])
			}
			f, err := c.GetAttachment(ctx, id)
			if err != nil {
				return err
			}
			if out == "-" {
				_, err := g.stdout.Write(f.Data)
				return err
			}
			path := out
			if path == "" {
				path = safeFilename(f.Filename)
			} else if st, err := os.Stat(path); err == nil && st.IsDir() {
				path = filepath.Join(path, safeFilename(f.Filename))
			}
			if err := writeNew(path, f.Data, force); err != nil {
				return err
			}
			g.note("Attachment %s written to %s (%s, %s)\n", i64(id), path, size(int64(len(f.Data))), f.ContentType)
			return nil
		}),
	}
	// -o names the file here (as curl's does), in place of the output format.
	download.Flags().StringVarP(&out, "output", "o", "", "the file to write, a directory to write it into, or - for standard output")
	download.Flags().BoolVar(&force, "force", false, "overwrite the file if it exists")
	_ = download.MarkFlagFilename("output")
	return group("attachment", "Files attached to support tickets", download)
}

// safeFilename is the name a server gave a file made safe to create in the current
// directory, whatever the server sent: its last path element (either separator), no
// control or bidi characters, no leading dots (neither hidden nor "..");
// "attachment" when nothing is left.
func safeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unsafe(r) || r == ':' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	if name == "" {
		return "attachment"
	}
	return name
}

// writeNew writes data to path, which must not exist unless force (then it is
// replaced); a symbolic link at path is never followed.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		if st, err := os.Lstat(path); err == nil {
			if !st.Mode().IsRegular() {
				return fmt.Errorf("%s exists and is not a regular file", escape(path))
			}
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: give --force to overwrite it, or -o another file", escape(path))
	} else if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
