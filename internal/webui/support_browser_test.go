package webui_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// signInBrowser signs email in and waits for the servers page.
func signInBrowser(t *testing.T, ctx context.Context, root, email string) {
	t.Helper()
	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
}

// pageText is main's text, its spaces folded.
func pageText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return get(t, ctx, "the page's text", chromedp.Evaluate[string](`document.querySelector('main').innerText.replace(/\s+/g, ' ')`))
}

// TestBrowserSupport: in the browser, a ticket is opened from Support → New ticket
// with a server and a screenshot attached (a file chosen in the file input), its page
// shows the thread with the file as a download link; a reply with a text file is
// added, and the ticket is closed after the confirmation page. A file of a type the
// core refuses is said on the form. The pages work by keyboard and 375 px wide.
func TestBrowserSupport(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	a, email := newAccount(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	orderedServer(t, env, token, "web-1", 1)
	root := env.Root
	files := t.TempDir()
	for name, data := range map[string][]byte{"iostat.png": pngFile, "dmesg.txt": []byte("[ 12.3] ata1: link is slow\n"),
		"page.html": []byte("<script>alert(1)</script>")} {
		if err := os.WriteFile(filepath.Join(files, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	signInBrowser(t, ctx, root, email)
	run(t, ctx, "the Support page", chromedp.Click(chromedp.CSS(`header nav a[href="/support"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a.button[href="/support/new"]`)))
	shot(t, ctx, dir, "support-empty")
	run(t, ctx, "the form", chromedp.Click(chromedp.CSS(`a.button[href="/support/new"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[data-ticket-form] button[type="submit"]`))) // the whole form parsed

	// A refused file first: the form says why, and keeps what was typed.
	run(t, ctx, "fill the form", chromedp.SendKeys(chromedp.CSS("#ticket_subject"), "Disk is slow on web-1"),
		chromedp.SetValue(chromedp.CSS("#ticket_priority"), "high"),
		chromedp.SetValue(chromedp.CSS("#ticket_server"), get(t, ctx, "the server's option",
			chromedp.Evaluate[string](`[...document.querySelectorAll('#ticket_server option')].find(o => o.text.startsWith('web-1')).value`))),
		chromedp.SendKeys(chromedp.CSS("#ticket_body"), "Since this morning IO waits are high.\nSee the graph."),
		chromedp.SetUploadFiles(chromedp.CSS("#ticket_files"), []string{filepath.Join(files, "page.html")}))
	run(t, ctx, "send it", chromedp.Click(chromedp.CSS(`form[data-ticket-form] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".field-error")))
	if text := pageText(t, ctx); !strings.Contains(text, "page.html: An attachment is one of image/png, image/jpeg, application/pdf, text/plain") {
		t.Errorf("the refusal of an HTML file: %q", text)
	}
	if v := get(t, ctx, "the subject", chromedp.Evaluate[string](`document.querySelector('#ticket_subject').value`)); v != "Disk is slow on web-1" {
		t.Errorf("the subject after a refusal: %q", v)
	}
	shot(t, ctx, dir, "support-new-refused")
	run(t, ctx, "choose a screenshot", chromedp.SetUploadFiles(chromedp.CSS("#ticket_files"), []string{filepath.Join(files, "iostat.png")}))
	shot(t, ctx, dir, "support-new")
	checkKeyboard(t, ctx, "support-new")
	run(t, ctx, "open the ticket", chromedp.Click(chromedp.CSS(`form[data-ticket-form] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-ticket-status="open"]`)))
	ticket := get(t, ctx, "location", chromedp.Location())
	text := pageText(t, ctx)
	for _, want := range []string{"The ticket is open", "Disk is slow on web-1", "High", "web-1", "Since this morning IO waits are high.", "iostat.png"} {
		if !strings.Contains(text, want) {
			t.Errorf("the ticket's page lacks %q: %q", want, text)
		}
	}
	if dl := get(t, ctx, "the file's link", chromedp.Evaluate[bool](`document.querySelector('a[data-attachment]').hasAttribute('download')`)); !dl {
		t.Error("the file's link is not a download")
	}

	run(t, ctx, "reply with a file", chromedp.SendKeys(chromedp.CSS("#reply_body"), "Here is dmesg."),
		chromedp.SetUploadFiles(chromedp.CSS("#reply_files"), []string{filepath.Join(files, "dmesg.txt")}),
		chromedp.Click(chromedp.CSS(`form[data-reply-form] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("ol.thread li.message:nth-child(2)")))
	if n := get(t, ctx, "messages", chromedp.Evaluate[int](`document.querySelectorAll('ol.thread li.message').length`)); n != 2 {
		t.Errorf("%d messages after the reply, want 2", n)
	}
	if text := pageText(t, ctx); !strings.Contains(text, "Here is dmesg.") || !strings.Contains(text, "dmesg.txt") {
		t.Errorf("after the reply: %q", text)
	}
	shot(t, ctx, dir, "support-ticket")
	checkKeyboard(t, ctx, "support-ticket")
	checkNarrow(t, ctx, dir, ticket, "support-ticket")

	run(t, ctx, "ask to close it", chromedp.Navigate(ticket), chromedp.Click(chromedp.CSS(`form[action$="/close"] button`)),
		chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")))
	shot(t, ctx, dir, "support-close")
	run(t, ctx, "close it", chromedp.Click(chromedp.CSS("button[data-confirm]")),
		chromedp.WaitVisible(chromedp.CSS(`[data-ticket-status="closed"]`)))
	run(t, ctx, "the list", chromedp.Navigate(root+"/support"), chromedp.WaitVisible(chromedp.CSS(`tr[data-ticket][data-status="closed"]`)))
	shot(t, ctx, dir, "support")
	checkKeyboard(t, ctx, "support")
	checkNarrow(t, ctx, dir, root+"/support", "support")
}

// TestBrowserStaff: in the browser, a staff member opens the queue from the nav,
// filters it by priority and account email, opens a ticket (the account's servers
// and billing beside it), adds an internal note (shown marked), replies, assigns it
// to themself, sees it under "mine", and closes it after the confirmation page. The
// customer's page shows the reply under the staff member's name and not the note.
func TestBrowserStaff(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	bg := context.Background()
	cust, custEmail := newAccount(t, env, "en")
	token, _ := apiToken(t, env, cust.ID)
	orderedServer(t, env, token, "db-7", 1)
	other, _ := newAccount(t, env, "en")
	open := func(a hosting.Account, subject, priority string) hosting.Ticket {
		body := "Please look at " + subject + "."
		tk, err := env.App.Service.CreateTicket(bg, hosting.Principal{Account: a}, ops.TicketCreate{Subject: &subject, Body: &body, Priority: &priority})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	tk := open(cust, "Database down", "urgent")
	open(other, "Invoice question", "low")
	open(cust, "Reverse DNS", "normal")
	staffEmail := "sam@example.com"
	if _, err := env.App.Service.CreateAccount(bg, ops.NewAccount{Email: staffEmail, Password: password, Name: "Sam Support", Language: "en"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.SetStaff(bg, staffEmail, true); err != nil {
		t.Fatal(err)
	}
	root := env.Root

	signInBrowser(t, ctx, root, staffEmail)
	run(t, ctx, "the queue", chromedp.Click(chromedp.CSS(`header nav a[data-staff-nav]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-ticket]`)))
	if n := get(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-ticket]').length`)); n != 3 {
		t.Errorf("the queue has %d tickets, want 3", n)
	}
	shot(t, ctx, dir, "staff-queue")
	checkKeyboard(t, ctx, "staff-queue")
	run(t, ctx, "filter urgent", chromedp.SetValue(chromedp.CSS("#q_priority"), "urgent"),
		chromedp.Click(chromedp.CSS(`form[data-queue-filter] button`)), chromedp.WaitReady(chromedp.CSS(`#q_priority option[value="urgent"][selected]`)))
	rows := get(t, ctx, "rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[data-ticket]')].map(r => r.dataset.ticket)`))
	if len(rows) != 1 || rows[0] != itoa(tk.ID) {
		t.Errorf("urgent tickets: %v, want [%d]", rows, tk.ID)
	}
	run(t, ctx, "filter by email", chromedp.SetValue(chromedp.CSS("#q_priority"), ""),
		chromedp.SendKeys(chromedp.CSS("#q_email"), custEmail),
		chromedp.Click(chromedp.CSS(`form[data-queue-filter] button`)), chromedp.WaitReady(chromedp.CSS(`#q_email[value="`+custEmail+`"]`)))
	if n := get(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-ticket]').length`)); n != 2 {
		t.Errorf("the customer's tickets: %d, want 2", n)
	}
	shot(t, ctx, dir, "staff-queue-filtered")

	run(t, ctx, "open the ticket", chromedp.Click(chromedp.CSS(`tr[data-ticket="`+itoa(tk.ID)+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#note_body")))
	ticket := get(t, ctx, "location", chromedp.Location())
	if text := get(t, ctx, "the side", chromedp.Evaluate[string](`document.querySelector('aside.staff-side').innerText.replace(/\s+/g, ' ')`)); !strings.Contains(text, custEmail) ||
		!strings.Contains(text, "db-7") || !strings.Contains(text, "s1-1c-1g") || !strings.Contains(text, "EUR") {
		t.Errorf("the account beside the ticket: %q", text)
	}
	const note = "Known issue on host 4; waiting for the fix."
	run(t, ctx, "add a note", chromedp.SendKeys(chromedp.CSS("#note_body"), note),
		chromedp.Click(chromedp.CSS(`form[data-staff-note] button`)), chromedp.WaitVisible(chromedp.CSS(`li.message.note`)))
	if text := get(t, ctx, "the note", chromedp.Text(chromedp.CSS("li.message.note"))); !strings.Contains(text, "Internal note") || !strings.Contains(text, note) {
		t.Errorf("the note: %q", text)
	}
	run(t, ctx, "reply", chromedp.SendKeys(chromedp.CSS("#reply_body"), "We restarted the database; it is back."),
		chromedp.Click(chromedp.CSS(`form[data-staff-reply] button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-ticket-status="answered"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[data-staff-assign] button`))) // the page parsed to its end
	me := get(t, ctx, "my option", chromedp.Evaluate[string](`[...document.querySelectorAll('#assignee_id option')].find(o => o.text === 'sam@example.com').value`))
	run(t, ctx, "assign to me", chromedp.SetValue(chromedp.CSS("#assignee_id"), me),
		chromedp.Click(chromedp.CSS(`form[data-staff-assign] button`)), chromedp.WaitReady(chromedp.CSS(`#assignee_id option[value="`+me+`"][selected]`)))
	if text := get(t, ctx, "the assignee", chromedp.Text(chromedp.CSS("[data-assignee]"))); !strings.Contains(text, "Sam Support") {
		t.Errorf("assignee %q", text)
	}
	shot(t, ctx, dir, "staff-ticket")
	checkKeyboard(t, ctx, "staff-ticket")
	checkNarrow(t, ctx, dir, ticket, "staff-ticket")

	run(t, ctx, "mine", chromedp.Navigate(root+"/staff/tickets?assignee=mine"), chromedp.WaitVisible(chromedp.CSS(`tr[data-ticket="`+itoa(tk.ID)+`"]`)))
	run(t, ctx, "ask to close", chromedp.Navigate(ticket), chromedp.Click(chromedp.CSS(`form[action$="/close"] button`)),
		chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")))
	run(t, ctx, "close it", chromedp.Click(chromedp.CSS("button[data-confirm]")), chromedp.WaitVisible(chromedp.CSS(`[data-ticket-status="closed"]`)))

	// The customer's view of it.
	// Sign out from a page loaded whole (Navigate waits for its load event).
	run(t, ctx, "sign out", chromedp.Navigate(root+"/support"), chromedp.Click(chromedp.CSS(`form.signout button`)),
		chromedp.WaitVisible(chromedp.CSS("#email")))
	signInBrowser(t, ctx, root, custEmail)
	run(t, ctx, "the customer's ticket", chromedp.Navigate(root+"/support/"+itoa(tk.ID)), chromedp.WaitVisible(chromedp.CSS(`[data-ticket-status="closed"]`)))
	text := pageText(t, ctx)
	if !strings.Contains(text, "We restarted the database; it is back.") || !strings.Contains(text, "Sam Support") ||
		strings.Contains(text, note) || strings.Contains(text, "Internal note") {
		t.Errorf("the customer's page: %q", text)
	}
	if n := get(t, ctx, "staff link", chromedp.Evaluate[int](`document.querySelectorAll('[data-staff-nav]').length`)); n != 0 {
		t.Error("the customer's nav has the staff link")
	}
	shot(t, ctx, dir, "support-answered")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
