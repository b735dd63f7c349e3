package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/version"
)

// globals are the global flags and the streams of one run.
type globals struct {
	url, token, context, output string
	timeout                     string
	quiet, noWait               bool
	retries                     int

	stdin          io.Reader
	stdout, stderr io.Writer
}

// note tells the user on stderr what was done (a deletion, a context saved, an
// operation's progress and success); --quiet leaves it out. Errors and what a user
// must act on are written whatever --quiet says. Its string arguments are escaped
// (they may come from the API), the format is not.
func (g *globals) note(format string, args ...any) {
	if !g.quiet {
		fmt.Fprintf(g.stderr, format, escapeArgs(args)...)
	}
}

// escapeArgs escapes the strings among args.
func escapeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = escape(s)
		}
		out[i] = a
	}
	return out
}

// config is $XDG_CONFIG_HOME/berth/config.toml.
type config struct {
	CurrentContext string                   `toml:"current_context"`
	Contexts       map[string]configContext `toml:"contexts"`
}

type configContext struct {
	URL   string `toml:"url"`
	Token string `toml:"token,omitempty"`
	// Timeout is how long to wait for each answer (a Go duration, "30s"; empty: the
	// SDK's default).
	Timeout string `toml:"timeout,omitempty"`
}

// configPath is $XDG_CONFIG_HOME/berth/config.toml (~/.config without it).
func configPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the configuration directory: %w", err)
	}
	return filepath.Join(dir, "berth", "config.toml"), nil
}

// loadConfig reads the configuration; a missing file is an empty one.
func loadConfig() (*config, string, error) {
	path, err := configPath()
	if err != nil {
		return nil, "", err
	}
	cfg := &config{}
	if _, err := toml.DecodeFile(path, cfg); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("reading %s: %w", path, err)
	}
	if cfg.Contexts == nil {
		cfg.Contexts = map[string]configContext{}
	}
	return cfg, path, nil
}

// save writes the configuration with mode 0600: it holds tokens.
func (c *config) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := toml.NewEncoder(tmp).Encode(c); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// settings are where and how a run calls the API.
type settings struct {
	url, token string
	tokenFrom  string // where the token came from, for an error about it
	timeout    time.Duration
}

// endpoint resolves the URL, token and timeout, each: flag > environment > context >
// default.
func (g *globals) endpoint() (settings, error) {
	s := settings{url: g.url, token: g.token, tokenFrom: "--token"}
	timeout, timeoutFrom := g.timeout, "--timeout"
	if s.url == "" {
		s.url = os.Getenv("BERTH_URL")
	}
	if s.token == "" {
		s.token, s.tokenFrom = os.Getenv("BERTH_TOKEN"), "BERTH_TOKEN"
	}
	if timeout == "" {
		timeout, timeoutFrom = os.Getenv("BERTH_TIMEOUT"), "BERTH_TIMEOUT"
	}
	if s.url == "" || s.token == "" || timeout == "" {
		cfg, path, err := loadConfig()
		if err != nil {
			return s, err
		}
		name := g.context
		if name == "" {
			name = os.Getenv("BERTH_CONTEXT")
		}
		explicit := name != ""
		if name == "" {
			name = cfg.CurrentContext
		}
		if name != "" {
			ctx, ok := cfg.Contexts[name]
			if !ok && explicit {
				return s, fmt.Errorf("no context %q in %s (berth context list)", name, path)
			}
			if s.url == "" {
				s.url = ctx.URL
			}
			if s.token == "" {
				s.token, s.tokenFrom = ctx.Token, fmt.Sprintf("context %s in %s", name, path)
			}
			if timeout == "" {
				timeout, timeoutFrom = ctx.Timeout, fmt.Sprintf("the timeout of context %s in %s", name, path)
			}
		}
	}
	if s.url == "" {
		s.url = client.DefaultBaseURL
	}
	s.timeout = client.DefaultTimeout
	if timeout != "" {
		d, err := parseTimeout(timeout)
		if err != nil {
			return s, fmt.Errorf("%s: %w", timeoutFrom, err)
		}
		s.timeout = d
	}
	return s, nil
}

// parseTimeout reads a timeout: a Go duration ("30s", "2m"), 0 for none.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("timeout %q: want a duration such as 30s or 2m (0: wait as long as it takes)", escape(v))
	}
	return d, nil
}

// client builds the SDK client of this run.
func (g *globals) client() (*client.Client, error) {
	s, err := g.endpoint()
	if err != nil {
		return nil, err
	}
	if s.token != "" {
		if err := checkToken(s.token); err != nil {
			return nil, fmt.Errorf("the token of %s: %w", s.tokenFrom, err)
		}
	}
	policy := client.DefaultRetryPolicy
	policy.MaxRetries = g.retries
	return client.New(client.WithBaseURL(s.url), client.WithToken(s.token), client.WithRetryPolicy(policy),
		client.WithTimeout(s.timeout), client.WithUserAgent("berth-cli/"+version.String()), client.WithLanguage(envLanguage()))
}

func contextCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "context", Short: "Manage the API endpoints and tokens in " + "$XDG_CONFIG_HOME/berth/config.toml"}
	var url string
	var tokenStdin bool
	create := &cobra.Command{
		Use:   "create NAME --url URL [--token-stdin] [--timeout DURATION]",
		Short: "Add a context (the token is read from a prompt or, with --token-stdin, from stdin) and make it current",
		Long: "Add a context and make it current. The token is read from a prompt or, with --token-stdin, from " +
			"stdin: one line of visible characters without spaces (a final newline is fine). A --timeout given " +
			"is kept with the context.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := client.New(client.WithBaseURL(url)); err != nil {
				return err
			}
			token, err := readToken(g, tokenStdin)
			if err != nil {
				return err
			}
			if g.timeout != "" {
				if _, err := parseTimeout(g.timeout); err != nil {
					return fmt.Errorf("--timeout: %w", err)
				}
			}
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Contexts[args[0]]; ok {
				return fmt.Errorf("context %q exists already (berth context delete %s)", args[0], args[0])
			}
			cfg.Contexts[args[0]] = configContext{URL: url, Token: token, Timeout: g.timeout}
			cfg.CurrentContext = args[0]
			if err := cfg.save(path); err != nil {
				return err
			}
			g.note("Context %s created and in use\n", args[0])
			return nil
		},
	}
	create.Flags().StringVar(&url, "url", client.DefaultBaseURL, "API base URL, ending in /v1")
	create.Flags().BoolVar(&tokenStdin, "token-stdin", false, "read the token from stdin")
	use := &cobra.Command{
		Use: "use NAME", Short: "Make a context the current one", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context %q: %w", args[0], errNameNotFound)
			}
			cfg.CurrentContext = args[0]
			return cfg.save(path)
		},
	}
	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a context", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context %q: %w", args[0], errNameNotFound)
			}
			delete(cfg.Contexts, args[0])
			if cfg.CurrentContext == args[0] {
				cfg.CurrentContext = ""
			}
			return cfg.save(path)
		},
	}
	list := &cobra.Command{
		Use: "list", Short: "List the contexts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(cfg.Contexts))
			for n := range cfg.Contexts {
				names = append(names, n)
			}
			sort.Strings(names)
			if g.quiet {
				for _, n := range names {
					fmt.Fprintln(g.stdout, escape(n))
				}
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 3, ' ', 0)
			fmt.Fprintln(tw, "ACTIVE\tNAME\tURL")
			for _, n := range names {
				active := ""
				if n == cfg.CurrentContext {
					active = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", active, cell(n), cell(cfg.Contexts[n].URL))
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(create, use, del, list)
	return cmd
}

// maxToken bounds what is read as a token (Berth's are 49 characters).
const maxToken = 4 << 10

// readToken reads a token from stdin (--token-stdin), all of it up to its end, or asks
// for it on a terminal without echo. Either way it must pass checkToken.
func readToken(g *globals, fromStdin bool) (string, error) {
	var line string
	if !fromStdin {
		f, ok := g.stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return "", errors.New("no terminal to ask for the token on: pass it with --token-stdin")
		}
		fmt.Fprint(g.stderr, "Token: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(g.stderr)
		if err != nil {
			return "", err
		}
		line = string(b)
	} else {
		b, err := io.ReadAll(io.LimitReader(g.stdin, maxToken+3))
		if err != nil {
			return "", fmt.Errorf("reading the token from stdin: %w", err)
		}
		line = string(b)
	}
	// One line: a final newline (or CRLF) ends it, anything after it is a second line.
	if l, ok := strings.CutSuffix(line, "\r\n"); ok {
		line = l
	} else {
		line = strings.TrimSuffix(line, "\n")
	}
	if err := checkToken(line); err != nil {
		if fromStdin {
			return "", fmt.Errorf("--token-stdin: %w", err)
		}
		return "", err
	}
	return line, nil
}

// readSecretLine reads a secret other than a token from stdin (flag names the flag
// that asked for it): its first line, without the line's end; on a terminal it is
// asked for without echo. Empty is an error.
func readSecretLine(g *globals, flag string) (string, error) {
	if f, ok := g.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(g.stderr, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(g.stderr)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flag, err)
		}
		if len(b) == 0 {
			return "", fmt.Errorf("%s: no password typed", flag)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(g.stdin, maxToken)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", fmt.Errorf("%s: stdin holds nothing (give it on the first line)", flag)
	}
	return line, nil
}

// checkToken says why s is not a token: a token is one line of 1 to 4096 visible
// ASCII characters, without spaces. The error never shows the token (it may be one,
// mistyped).
func checkToken(s string) error {
	switch {
	case s == "":
		return errors.New("empty token: give the API token of the account (berth_...)")
	case len(s) > maxToken:
		return fmt.Errorf("the token is longer than %d bytes: give the API token alone", maxToken)
	case strings.Contains(s, "\n"):
		return errors.New("the token is more than one line: give the API token alone, on one line")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			return fmt.Errorf("the token holds a space or a tab (at byte %d): a token is one word", i+1)
		case c < 0x21 || c > 0x7e:
			return fmt.Errorf("the token holds a byte that is not a visible ASCII character (0x%02x at byte %d)", c, i+1)
		}
	}
	return nil
}

// envLanguage is the language of the locale ("de" of LANG=de_DE.UTF-8), sent as
// Accept-Language for the messages given before the token is known.
func envLanguage() string {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		l := os.Getenv(v)
		if l == "" {
			continue
		}
		if l == "C" || l == "POSIX" || strings.HasPrefix(l, "C.") {
			return ""
		}
		if i := strings.IndexAny(l, "_.@"); i > 0 {
			l = l[:i]
		}
		return l
	}
	return ""
}
