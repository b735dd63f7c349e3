// Command terraform-provider-berth is Berth's provider for Terraform and OpenTofu,
// berth/berth (package internal/tfprovider). Terraform or OpenTofu starts it; run
// by hand with -debug, it prints the TF_REATTACH_PROVIDERS line that lets a
// debugger-attached provider serve `tofu plan`; with --version, it prints its version.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/berthhq/berth/internal/tfprovider"
	"github.com/berthhq/berth/internal/version"
)

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of being started by OpenTofu")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	// The version is stamped at build (-ldflags "-X github.com/berthhq/berth/internal/version.Version=...",
	// as make build does); OpenTofu shows it, and it goes into the User-Agent.
	v := version.String()
	if *showVersion {
		fmt.Println("terraform-provider-berth", v)
		return
	}
	err := providerserver.Serve(context.Background(), tfprovider.New(v), providerserver.ServeOpts{
		Address: tfprovider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
