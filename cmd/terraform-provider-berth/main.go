// Command terraform-provider-berth is Berth's provider for Terraform and OpenTofu,
// berth/berth (package internal/tfprovider). Terraform or OpenTofu starts it; run
// by hand with -debug, it prints the TF_REATTACH_PROVIDERS line that lets a
// debugger-attached provider serve `tofu plan`.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/tfprovider"
)

// version is set by the release build (-ldflags "-X main.version=...").
var version = client.Version

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of being started by OpenTofu")
	flag.Parse()
	err := providerserver.Serve(context.Background(), tfprovider.New(version), providerserver.ServeOpts{
		Address: tfprovider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
