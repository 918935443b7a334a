//go:build mage

package main

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/internal/protogen"
)

// Proto regenerates daemon/api/cuzkv1 from the proto files with the pinned protoc-gen-go, protoc-gen-go-grpc and protoc.
func Proto(ctx context.Context) error {
	if err := protogen.Generate(ctx, ".", "daemon/api"); err != nil {
		return err
	}
	fmt.Println("proto: daemon/api/cuzkv1 regenerated from", protogen.Files)
	return nil
}
