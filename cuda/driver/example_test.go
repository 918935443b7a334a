package driver_test

import (
	"errors"
	"fmt"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Open a device, run work on its thread, and fall back plainly where there
// is no GPU.
func ExampleDevice_Do() {
	dev, err := driver.Open(0)
	if errors.Is(err, driver.ErrNoGPU) {
		fmt.Println("no GPU:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	in := []uint32{1, 2, 3, 4}
	out := make([]uint32, len(in))
	err = dev.Do(func(c *driver.Ctx) error {
		p, err := c.Alloc(len(in) * 4)
		if err != nil {
			return err
		}
		return errors.Join(c.HtoD(p, driver.Bytes(in)), c.DtoH(driver.Bytes(out), p), c.Free(p))
	})
	fmt.Println(dev.Info(), out, err)
}
