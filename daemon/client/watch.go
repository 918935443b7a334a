package client

import (
	"context"
	"time"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
)

// ProveWatched proves as Prove does, in three calls to one daemon so that
// the job can be followed: SubmitProof, then WatchProof, whose events go to
// watch as they come, beside AwaitProof, whose result it returns. A watch
// stream that breaks only ends the events; the result or the error is
// AwaitProof's. With several daemons behind c, the calls may reach
// different ones: give c one address.
func ProveWatched(ctx context.Context, c *Client, req *pb.ProofRequest, watch func(jobID string, ev *pb.ProofEvent)) (*pb.ProofResult, error) {
	sub, err := c.SubmitProof(ctx, req)
	if err != nil {
		return nil, err
	}
	id := sub.GetJobId()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stream, err := c.WatchProof(wctx, &pb.WatchProofRequest{JobId: id})
		if err != nil {
			return // no events: the await below still answers
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				return // the job ended (io.EOF) or the stream broke
			}
			watch(id, ev)
		}
	}()
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id})
	select { // the stream ends with the job's last event, right after the result
	case <-done:
	case <-time.After(2 * time.Second):
		cancel()
		<-done
	}
	return res, err
}
