package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/sdk"
)

func templatesCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{Use: "templates", Aliases: []string{"template", "tpl"}, Short: "List and manage templates"}
	table := func(list []sdk.Template) func(w *tabwriter.Writer) {
		return func(w *tabwriter.Writer) {
			fmt.Fprintln(w, "NAME\tSCOPE\tREVISION\tPORT\tDIGEST\tIMAGE")
			for _, t := range list {
				rev, digest := "-", "-"
				if t.Revision != nil {
					rev = strconv.Itoa(*t.Revision)
				}
				if t.ImageDigest != nil {
					digest = (*t.ImageDigest)[:min(len(*t.ImageDigest), 19)]
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", t.Name, t.Scope, rev, t.DefaultPort, digest, orDash(t.ImageRef))
			}
		}
	}
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List system and workspace templates", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			list, err := cl.Templates(cmd.Context())
			if err != nil {
				return err
			}
			return c.print(list, table(list))
		},
	}, &cobra.Command{
		Use: "get NAME[@VERSION]", Short: "Show one template and its revisions", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			t, err := cl.Template(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.print(t, table([]sdk.Template{t}))
		},
	})

	var create sdk.CreateTemplate
	var port int
	var user, password string
	creat := &cobra.Command{
		Use: "create NAME IMAGE_REF", Short: "Register an image as a workspace template", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			create.Name, create.ImageRef = args[0], args[1]
			if port != 0 {
				create.DefaultPort = &port
			}
			if user != "" {
				create.RegistryAuth = &sdk.RegistryAuth{Username: user, Password: password}
			}
			t, err := cl.CreateTemplate(cmd.Context(), create)
			if err != nil {
				return err
			}
			return c.print(t, table([]sdk.Template{t}))
		},
	}
	creat.Flags().IntVar(&port, "default-port", 0, "port the bare URL routes to and the boot probe checks")
	creat.Flags().StringVar(&create.Description, "description", "", "free text")
	creat.Flags().StringVar(&user, "registry-user", "", "registry username (used once, not stored)")
	creat.Flags().StringVar(&password, "registry-password", "", "registry password (used once, not stored)")

	var update sdk.UpdateTemplate
	var newRef, desc string
	var uport int
	upd := &cobra.Command{
		Use: "update NAME", Short: "Publish a new image (a new revision) or change fields", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if newRef != "" {
				update.ImageRef = &newRef
			}
			if cmd.Flags().Changed("description") {
				update.Description = &desc
			}
			if uport != 0 {
				update.DefaultPort = &uport
			}
			if user != "" {
				update.RegistryAuth = &sdk.RegistryAuth{Username: user, Password: password}
			}
			t, err := cl.UpdateTemplate(cmd.Context(), args[0], update)
			if err != nil {
				return err
			}
			return c.print(t, table([]sdk.Template{t}))
		},
	}
	upd.Flags().StringVar(&newRef, "image", "", "new image reference")
	upd.Flags().StringVar(&desc, "description", "", "free text")
	upd.Flags().IntVar(&uport, "default-port", 0, "port the bare URL routes to")
	upd.Flags().StringVar(&user, "registry-user", "", "registry username (used once, not stored)")
	upd.Flags().StringVar(&password, "registry-password", "", "registry password (used once, not stored)")

	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a workspace template (instances keep their image)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteTemplate(cmd.Context(), args[0]); err != nil {
				return err
			}
			return c.print(sdk.Deleted{Name: args[0], Deleted: true}, func(w *tabwriter.Writer) { fmt.Fprintf(w, "deleted %s\n", args[0]) })
		},
	}
	cmd.AddCommand(creat, upd, del)
	return cmd
}
