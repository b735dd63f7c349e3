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

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/berthhq/berth/client"
)

// globals are the global flags and the streams of one run.
type globals struct {
	url, token, context, output string
	quiet, noWait               bool
	retries                     int

	stdin          io.Reader
	stdout, stderr io.Writer
}

// note tells the user on stderr what was done (a deletion, a context saved, an
// operation's progress and success); --quiet leaves it out. Errors and what a user
// must act on are written whatever --quiet says.
func (g *globals) note(format string, args ...any) {
	if !g.quiet {
		fmt.Fprintf(g.stderr, format, args...)
	}
}

// config is $XDG_CONFIG_HOME/berth/config.toml.
type config struct {
	CurrentContext string                   `toml:"current_context"`
	Contexts       map[string]configContext `toml:"contexts"`
}

type configContext struct {
	URL   string `toml:"url"`
	Token string `toml:"token,omitempty"`
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

// endpoint resolves the URL and token: flag > environment > context > default.
func (g *globals) endpoint() (url, token string, err error) {
	url, token = g.url, g.token
	if url == "" {
		url = os.Getenv("BERTH_URL")
	}
	if token == "" {
		token = os.Getenv("BERTH_TOKEN")
	}
	if url == "" || token == "" {
		cfg, path, err := loadConfig()
		if err != nil {
			return "", "", err
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
				return "", "", fmt.Errorf("no context %q in %s (berth context list)", name, path)
			}
			if url == "" {
				url = ctx.URL
			}
			if token == "" {
				token = ctx.Token
			}
		}
	}
	if url == "" {
		url = client.DefaultBaseURL
	}
	return url, token, nil
}

// client builds the SDK client of this run.
func (g *globals) client() (*client.Client, error) {
	url, token, err := g.endpoint()
	if err != nil {
		return nil, err
	}
	policy := client.DefaultRetryPolicy
	policy.MaxRetries = g.retries
	return client.New(client.WithBaseURL(url), client.WithToken(token), client.WithRetryPolicy(policy),
		client.WithUserAgent("berth-cli/"+client.Version), client.WithLanguage(envLanguage()))
}

func contextCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "context", Short: "Manage the API endpoints and tokens in " + "$XDG_CONFIG_HOME/berth/config.toml"}
	var url string
	var tokenStdin bool
	create := &cobra.Command{
		Use:   "create NAME --url URL [--token-stdin]",
		Short: "Add a context (the token is read from a prompt or, with --token-stdin, from stdin) and make it current",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := client.New(client.WithBaseURL(url)); err != nil {
				return err
			}
			token, err := readToken(g, tokenStdin)
			if err != nil {
				return err
			}
			if token == "" {
				return errors.New("empty token: give the API token of the account (berth_...)")
			}
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Contexts[args[0]]; ok {
				return fmt.Errorf("context %q exists already (berth context delete %s)", args[0], args[0])
			}
			cfg.Contexts[args[0]] = configContext{URL: url, Token: token}
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
					fmt.Fprintln(g.stdout, n)
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
				fmt.Fprintf(tw, "%s\t%s\t%s\n", active, n, cfg.Contexts[n].URL)
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(create, use, del, list)
	return cmd
}

// readToken reads a token from stdin (--token-stdin), or asks for it on a terminal
// without echo.
func readToken(g *globals, fromStdin bool) (string, error) {
	if !fromStdin {
		if f, ok := g.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			fmt.Fprint(g.stderr, "Token: ")
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(g.stderr)
			if err != nil {
				return "", err
			}
			return strings.TrimSpace(string(b)), nil
		}
		return "", errors.New("no terminal to ask for the token on: pass it with --token-stdin")
	}
	line, err := bufio.NewReader(g.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
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
