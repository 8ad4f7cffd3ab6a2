package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/store"
)

// adminCmd holds the operator's commands. They work on the data directory
// directly, whether or not svcd is running.
func adminCmd(getenv func(string) string, stdout io.Writer) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{Use: "admin", Short: "Operator commands: workspaces, keys, wallets, system images"}
	cmd.PersistentFlags().StringVar(&dataDir, "data", envOr(getenv, "SVC_DATA", "./.svc"), "data directory (env SVC_DATA)")
	open := func(ctx context.Context) (*store.Store, error) {
		return store.Open(ctx, filepath.Join(dataDir, "svc.db"))
	}

	ws := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	ws.AddCommand(&cobra.Command{
		Use: "create NAME", Short: "Create a workspace and its first API key (printed once)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			w, key, err := auth.CreateWorkspace(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "workspace %s (%s)\nAPI key (shown once): %s\n", w.ID, w.Name, key)
			return nil
		},
	}, &cobra.Command{
		Use: "list", Short: "List workspaces", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.Workspaces(cmd.Context())
			if err != nil {
				return err
			}
			for _, w := range list {
				wal, _ := st.Wallet(cmd.Context(), w.ID)
				fmt.Fprintf(stdout, "%s\t%s\tbalance $%.2f\tperformance %v\n", w.ID, w.Name, float64(wal.BalanceMicros)/1e6, w.PerformanceEnabled)
			}
			return nil
		},
	}, &cobra.Command{
		Use: "performance WORKSPACE on|off", Short: "Enable or disable the performance instance type", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, err := strconv.ParseBool(map[string]string{"on": "true", "off": "false"}[args[1]])
			if err != nil {
				return fmt.Errorf("say on or off")
			}
			st, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			return st.SetPerformance(cmd.Context(), args[0], on)
		},
	})

	key := &cobra.Command{Use: "key", Short: "Manage API keys"}
	key.AddCommand(&cobra.Command{
		Use: "create WORKSPACE", Short: "Create another API key (printed once)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if _, err := st.Workspace(cmd.Context(), args[0]); err != nil {
				return fmt.Errorf("workspace %s: %w", args[0], err)
			}
			k, err := auth.AddKey(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, k)
			return nil
		},
	})

	var idem string
	credit := &cobra.Command{
		Use: "credit WORKSPACE USD", Short: "Top up a workspace wallet (an operator top-up)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			usd, err := strconv.ParseFloat(args[1], 64)
			if err != nil || usd <= 0 || math.IsInf(usd, 0) {
				return fmt.Errorf("amount must be a positive number of dollars")
			}
			micros := int64(math.Round(usd * 1e6))
			st, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if idem == "" {
				idem = "admin-" + auth.Random(16, "abcdefghijklmnopqrstuvwxyz0123456789")
			}
			applied, err := st.Credit(cmd.Context(), args[0], micros, idem, "operator top-up")
			if err != nil {
				return err
			}
			wal, err := st.Wallet(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !applied {
				fmt.Fprintf(stdout, "already applied (idempotency key %s); ", idem)
			}
			fmt.Fprintf(stdout, "balance $%.2f\n", float64(wal.BalanceMicros)/1e6)
			return nil
		},
	}
	credit.Flags().StringVar(&idem, "idempotency-key", "", "makes a retried credit a no-op")
	wallet := &cobra.Command{Use: "wallet", Short: "Manage wallets"}
	wallet.AddCommand(credit)

	cmd.AddCommand(ws, key, wallet, imagesCmd(&dataDir, stdout))
	return cmd
}
