// fr_host.cc runs cuzk/fr.cuh's arithmetic on the host, where ptx.cuh
// emulates the carry flag, so the device instruction sequence can be checked
// against gnark-crypto without a GPU (host_test.go).
//
// Usage: fr_host KERNEL N < inputs > outputs, where KERNEL is one of the
// fr_* kernel names, inputs are N elements a (then N elements b for binary
// kernels) as 32-byte little-endian limbs, and outputs are N elements.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuzk/fr.cuh"

using cuzk::Fr;

static bool read_all(std::vector<Fr>& v) {
  return fread(v.data(), sizeof(Fr), v.size(), stdin) == v.size();
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fr_host KERNEL N\n");
    return 2;
  }
  const char* k = argv[1];
  const size_t n = strtoull(argv[2], nullptr, 10);
  const bool binary =
      !strcmp(k, "fr_add") || !strcmp(k, "fr_sub") || !strcmp(k, "fr_mul") || !strcmp(k, "fr_mul_chain");
  std::vector<Fr> a(n), b(binary ? n : 0), out(n);
  if (!read_all(a) || (binary && !read_all(b))) {
    fprintf(stderr, "fr_host: short input\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(k, "fr_add")) out[i] = a[i] + b[i];
    else if (!strcmp(k, "fr_sub")) out[i] = a[i] - b[i];
    else if (!strcmp(k, "fr_mul")) out[i] = a[i] * b[i];
    else if (!strcmp(k, "fr_mul_chain")) out[i] = cuzk::mul_chain(a[i], b[i]);
    else if (!strcmp(k, "fr_neg")) out[i] = -a[i];
    else if (!strcmp(k, "fr_sqr")) out[i] = cuzk::sqr(a[i]);
    else if (!strcmp(k, "fr_to_mont")) out[i] = cuzk::to_mont(a[i]);
    else if (!strcmp(k, "fr_from_mont")) out[i] = cuzk::from_mont(a[i]);
    else {
      fprintf(stderr, "fr_host: unknown kernel %s\n", k);
      return 2;
    }
  }
  return fwrite(out.data(), sizeof(Fr), n, stdout) == n ? 0 : 1;
}
