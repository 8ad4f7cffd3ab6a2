package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/sdk"
)

func instanceTable(list []sdk.Instance) func(w *tabwriter.Writer) {
	return func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "ID\tSTATUS\tTEMPLATE\tSHAPE\tNAME\tCREATED\tURL")
		for _, in := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d/%d\t%s\t%s\t%s\n", in.ID, in.Status, in.Template,
				in.Resources.CPU, in.Resources.Memory, in.Resources.Disk, orDash(in.Name),
				time.Unix(in.Created, 0).Format("2006-01-02 15:04"), in.URL)
			if in.StatusReason != nil {
				fmt.Fprintf(w, "\t  %s: %s\n", in.StatusReason.Code, in.StatusReason.Message)
			}
		}
	}
}

func instancesCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{Use: "instances", Aliases: []string{"instance", "i"}, Short: "Create and manage instances"}

	var req sdk.CreateInstance
	var res sdk.Resources
	var name, user, metadata string
	var env, ports []string
	var autoSleep bool
	var idle int
	create := &cobra.Command{
		Use: "create", Short: "Create an instance (returns once it runs)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if res != (sdk.Resources{}) {
				req.Resources = &res
			}
			if name != "" {
				req.Name = &name
			}
			if user != "" {
				req.User = &user
			}
			if metadata != "" {
				req.Metadata = json.RawMessage(metadata)
			}
			if len(env) > 0 {
				req.Env = map[string]string{}
				for _, kv := range env {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return fmt.Errorf("--env wants KEY=VALUE, got %q", kv)
					}
					req.Env[k] = v
				}
			}
			for _, p := range ports {
				num, prefix, hasPrefix := strings.Cut(p, ":")
				n, err := strconv.Atoi(num)
				if err != nil {
					return fmt.Errorf("--public-port wants PORT or PORT:PREFIX, got %q", p)
				}
				pr := sdk.PortRequest{Port: n}
				if hasPrefix {
					pr.Prefix = &prefix
				}
				req.PublicPorts = append(req.PublicPorts, pr)
			}
			if cmd.Flags().Changed("auto-sleep") {
				req.AutoSleep = &autoSleep
			}
			if idle != 0 {
				req.IdleTimeoutSeconds = &idle
			}
			in, err := cl.CreateInstance(cmd.Context(), req)
			if err != nil {
				return err
			}
			return c.print(in, instanceTable([]sdk.Instance{in}))
		},
	}
	f := create.Flags()
	f.StringVarP(&req.Template, "template", "t", "", "template name, optionally @tag or @revision (default svc-general)")
	f.IntVar(&res.CPU, "cpu", 0, "vCPUs: 2, 4 or 8")
	f.IntVar(&res.Memory, "memory", 0, "GB of memory: 4, 8 or 16 (with --cpu)")
	f.IntVar(&res.Disk, "disk", 0, "GB of disk (default by shape)")
	f.StringVar(&req.Type, "type", "", "default or performance")
	f.StringVar(&name, "name", "", "label")
	f.StringVar(&user, "user", "", "attribution tag")
	f.StringVar(&metadata, "metadata", "", "JSON object stored with the instance")
	f.StringArrayVarP(&env, "env", "e", nil, "KEY=VALUE (repeatable)")
	f.StringArrayVar(&ports, "public-port", nil, "PORT or PORT:PREFIX to make public (repeatable)")
	f.BoolVar(&autoSleep, "auto-sleep", false, "sleep when idle")
	f.IntVar(&idle, "idle-timeout", 0, "seconds of idleness before sleeping (300 to 86400)")

	list := &cobra.Command{
		Use: "list", Short: "List instances, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			l, err := cl.Instances(cmd.Context())
			if err != nil {
				return err
			}
			return c.print(l, instanceTable(l))
		},
	}
	get := &cobra.Command{
		Use: "get ID", Short: "Show one instance", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			in, err := cl.Instance(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.print(in, instanceTable([]sdk.Instance{in}))
		},
	}
	lifecycle := func(use, short string, op func(*sdk.Client, context.Context, string) (sdk.Ack, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				cl, err := c.client()
				if err != nil {
					return err
				}
				ack, err := op(cl, cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return c.print(ack, func(w *tabwriter.Writer) { fmt.Fprintf(w, "%s\t%s\n", ack.ID, ack.Status) })
			},
		}
	}
	stop := lifecycle("stop", "Stop an instance (disk kept)", (*sdk.Client).StopInstance)
	start := lifecycle("start", "Start a stopped instance", (*sdk.Client).StartInstance)
	restart := lifecycle("restart", "Restart a running instance", (*sdk.Client).RestartInstance)
	del := &cobra.Command{
		Use: "delete ID", Short: "Delete an instance and its disk", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteInstance(cmd.Context(), args[0]); err != nil {
				return err
			}
			return c.print(sdk.Deleted{ID: args[0], Deleted: true}, func(w *tabwriter.Writer) { fmt.Fprintf(w, "deleted %s\n", args[0]) })
		},
	}

	var timeout int
	var cwd string
	var execEnv []string
	exec := &cobra.Command{
		Use: "exec ID -- COMMAND [ARG...]", Short: "Run a command in an instance", Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			argv := make([]any, 0, len(args)-1)
			for _, a := range args[1:] {
				argv = append(argv, a)
			}
			r := sdk.ExecRequest{Command: argv, TimeoutSeconds: timeout, Cwd: cwd}
			for _, kv := range execEnv {
				k, v, _ := strings.Cut(kv, "=")
				if r.Env == nil {
					r.Env = map[string]string{}
				}
				r.Env[k] = v
			}
			out, err := cl.Exec(cmd.Context(), args[0], r)
			if err != nil {
				return err
			}
			if c.json {
				return c.print(out, nil)
			}
			io.WriteString(c.stdout, out.Stdout)
			io.WriteString(c.stderr, out.Stderr)
			if out.Truncated {
				fmt.Fprintln(c.stderr, "svc: output truncated at 512 KB")
			}
			if out.TimedOut {
				fmt.Fprintln(c.stderr, "svc: command timed out")
			}
			if out.ExitCode != 0 {
				return exitCode(max(out.ExitCode, 1))
			}
			return nil
		},
	}
	exec.Flags().IntVar(&timeout, "timeout", 0, "seconds before the command is killed (default 60)")
	exec.Flags().StringVar(&cwd, "cwd", "", "working directory")
	exec.Flags().StringArrayVarP(&execEnv, "env", "e", nil, "KEY=VALUE (repeatable)")

	var tail int
	var follow bool
	logs := &cobra.Command{
		Use: "logs ID", Short: "Print an instance's console log", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			rc, err := cl.Logs(cmd.Context(), args[0], tail, follow)
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.Copy(c.stdout, rc)
			if cmd.Context().Err() != nil {
				return nil
			}
			return err
		},
	}
	logs.Flags().IntVar(&tail, "tail", 0, "only the last N lines")
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output")

	var port int
	var ttl time.Duration
	signed := &cobra.Command{
		Use: "open-url ID", Short: "Print a signed URL that opens the instance (or --port) in a browser without the key", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := sdk.SignedURLRequest{}
			if port != 0 {
				req.Port = &port
			}
			if ttl != 0 {
				secs := int(ttl.Seconds())
				req.ExpiresInSeconds = &secs
			}
			u, err := cl.SignedURL(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			return c.print(u, func(w *tabwriter.Writer) { fmt.Fprintln(w, u.URL) })
		},
	}
	signed.Flags().IntVar(&port, "port", 0, "instance port (default: the template's default port)")
	signed.Flags().DurationVar(&ttl, "ttl", 0, "lifetime of the URL (default 1h, at most 24h)")

	cmd.AddCommand(create, list, get, stop, start, restart, del, exec, logs, signed)
	return cmd
}
