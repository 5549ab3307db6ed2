package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/server"
)

// uiCmd is `prsm ui`: the review page in the default browser, logged in
// through a one-time code that the running server mints.
//
// The browser is not handed an address with the code in it: the opener's
// command line (xdg-open URL) is readable by every local user in /proc,
// and whoever spends a code first gets the login. The server writes the
// code into a login file instead, a form only the user can read that posts
// it, and the browser opens the file's file:// address, which holds no
// secret.
func (a *app) uiCmd() *cobra.Command {
	var printURL bool
	c := &cobra.Command{
		Use:     "ui [--print-url]",
		Example: "  prsm ui\n  prsm ui --print-url",
		Short:   "Open the review page in your browser, logged in",
		Long: "Open the review page of the workspace's server in your default browser ($BROWSER, else the\n" +
			"system's opener). The browser opens a login file that only you can read; it posts a one-time\n" +
			"code, which works once, within " + server.CodeTTL.String() + ", and the browser swaps it for a login cookie. The\n" +
			"file is removed once used or expired. With --print-url an address that carries the code is\n" +
			"printed instead, for you to paste into a browser.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			if printURL {
				code, err := loginCode(ctx, cl)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdio.Out, code.URL)
				return nil
			}
			code, err := mintLogin(ctx, cl, &api.LoginCodeRequest{LoginFile: true})
			if err != nil {
				return err
			}
			if code.LoginFile == "" {
				// Never fall back to the code's address on a command line.
				return prsm.Errorf(prsm.ErrConflict, "no_login_file", "restart it: prsm stop, then prsm ui; or use prsm ui --print-url",
					"the running prsm server is older than this prsm and cannot write a login file")
			}
			fileURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(code.LoginFile)}).String()
			if err := openBrowser(fileURL); err != nil {
				fmt.Fprintf(a.stdio.Out, "could not open a browser (%v); open this address, which works once, within %s:\n  %s\n",
					err, server.CodeTTL, code.URL)
				return nil
			}
			fmt.Fprintf(a.stdio.Out, "opened the review page in your browser (%s)\n", strings.TrimSuffix(code.URL, api.RouteUILogin.Path()+"?code="+code.Code))
			return nil
		},
	}
	c.Flags().BoolVar(&printURL, "print-url", false, "only print the one-time login address")
	return c
}

// loginCode asks the server for a one-time login code.
func loginCode(ctx context.Context, cl *client.Client) (*api.LoginCode, error) {
	return mintLogin(ctx, cl, nil)
}

// mintLogin asks the server for a one-time login code as req says (nil: a
// plain code).
func mintLogin(ctx context.Context, cl *client.Client, req *api.LoginCodeRequest) (*api.LoginCode, error) {
	var code api.LoginCode
	var body any
	if req != nil {
		body = req
	}
	err := cl.Do(ctx, api.RouteUIMintCode.Method(), api.RouteUIMintCode.Path(), body, &code)
	var ae *client.APIError
	if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return nil, prsm.Errorf(prsm.ErrConflict, "no_review_page", "restart it: prsm stop, then prsm ui",
			"the running prsm server is older than the review page")
	}
	if err != nil {
		return nil, err
	}
	return &code, nil
}

// openBrowser opens url with $BROWSER or the system's opener, and reports
// an error when none could be started or it failed at once. The url is on
// the opener's command line, where any local user can read it: it must
// hold no secret.
func openBrowser(url string) error {
	var argv []string
	if b := strings.TrimSpace(strings.Split(os.Getenv("BROWSER"), string(os.PathListSeparator))[0]); b != "" {
		argv = append(strings.Fields(b), url)
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", url}
		default:
			argv = []string{"xdg-open", url}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	osproc.Detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	case <-time.After(3 * time.Second):
		return nil // a browser that stays in the foreground: it opened
	}
}
