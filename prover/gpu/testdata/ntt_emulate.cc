// ntt_emulate.cc runs cuzk's NTT kernels (cuda/kernels/ntt.cu) on the CPU in
// the launch order of prover/gpu's nttKernels (ntt.go: newDomain, scaleOf,
// transform, toCoset, divideAndInterpolate; quotient.go's lean quotient)
// and writes the resulting vector.
// TestNTTKernelsOnHost compiles it with a host C++ compiler, so the kernels'
// arithmetic, index, twiddle and shared-memory code runs exactly as written
// (PTX carry instructions emulated, see ptx.cuh) on machines without a GPU.
//
// The pass kernels run with the block size of the plan: a block's threads are
// coroutines, switched at every barrier (ntt.cuh: cuzk_ntt_barrier), so that
// each thread runs its part of a phase and every thread of the block reaches
// a barrier before any passes it, as on the device.
//
// Usage: ntt_emulate IN OUT. IN: five little-endian uint32 (op, logN, s,
// number of DIF passes, number of DIT passes); six uint32 per pass, DIF plan
// then DIT plan (lo, k, logG, sh, threads, blocks); then fr.Elements: ω; base,
// base^(2^s), mul for each of the four scale kinds (ntt.go: scaleKind order);
// 1/(g^n − 1); then the input vector (three for ops 4 and 5). op: 0 NTT,
// 1 INTT, 2 coset NTT, 3 coset INTT, 4 QuotientH, 5 QuotientH in two work
// vectors (quotient.go's lean order). OUT: the n result elements, which
// the final transform writes into a vector of its own, as on the device.
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ntt.cu"

namespace {

typedef std::vector<F> Vec;

struct PassArgs {
  uint32_t lo, k, logG, sh, threads, blocks;
};

// Sched runs one block's threads as coroutines.
struct Sched {
  ucontext_t main;
  std::vector<ucontext_t> ctx;
  std::vector<std::vector<char>> stacks;
  std::vector<char> done;
  std::function<void()> body;
  uint32_t cur = 0;
};

Sched* sched;

void to_scheduler() { swapcontext(&sched->ctx[sched->cur], &sched->main); }

void thread_entry() {
  sched->body();
  sched->done[sched->cur] = 1;  // returns to uc_link: the scheduler
}

// launch_blocks runs fn on a grid of blocks of `threads` threads, one block
// after another; within a block every thread runs up to its next barrier in
// turn, then the next round starts.
void launch_blocks(uint32_t grid, uint32_t threads, std::function<void()> fn) {
  Sched s;
  sched = &s;
  s.body = std::move(fn);
  s.ctx.resize(threads);
  s.stacks.assign(threads, std::vector<char>(1 << 16));
  cuzk_ntt_barrier = to_scheduler;
  blockDim = {threads, 1, 1};
  for (uint32_t b = 0; b < grid; b++) {
    blockIdx = {b, 0, 0};
    s.done.assign(threads, 0);
    for (uint32_t t = 0; t < threads; t++) {
      getcontext(&s.ctx[t]);
      s.ctx[t].uc_stack.ss_sp = s.stacks[t].data();
      s.ctx[t].uc_stack.ss_size = s.stacks[t].size();
      s.ctx[t].uc_link = &s.main;
      makecontext(&s.ctx[t], thread_entry, 0);
    }
    for (;;) {
      for (uint32_t t = 0; t < threads; t++) {
        s.cur = t;
        threadIdx = {t, 0, 0};
        swapcontext(&s.main, &s.ctx[t]);
      }
      uint32_t finished = 0;
      for (char d : s.done) finished += d;
      if (finished == threads) break;
      if (finished != 0) {
        fprintf(stderr, "block %u: %u of %u threads exited while the others wait at a barrier\n", b, finished,
                threads);
        exit(5);
      }
    }
  }
  cuzk_ntt_barrier = nullptr;
  sched = nullptr;
}

// launch runs a barrier-free kernel as grid·threads threads in order.
void launch(uint32_t grid, uint32_t threads, const std::function<void()>& fn) {
  blockDim = {threads, 1, 1};
  for (uint32_t b = 0; b < grid; b++) {
    blockIdx = {b, 0, 0};
    for (uint32_t t = 0; t < threads; t++) {
      threadIdx = {t, 0, 0};
      fn();
    }
  }
}

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// elementwise mirrors ntt.go's elementwise launch shape.
void elementwise(uint32_t n, const std::function<void()>& fn) { launch(ceil_div(n, 256), 256, fn); }

struct ScaleT {
  Vec lo, hi;
  uint32_t s;
};

struct Domain {
  uint32_t logN, s;
  std::vector<PassArgs> dif, dit;
  Vec w;
  ScaleT scales[4];

  uint32_t n() const { return 1u << logN; }
};

// powers mirrors nttKernels.powers.
void powers(Vec& t, const F& base, const F& c, uint32_t count) {
  const uint32_t chunk = 64, threads = 128;
  t.assign(count, F::zero());
  launch(ceil_div(ceil_div(count, chunk), threads), threads,
         [&] { ntt_powers(t.data(), base, c, count, chunk); });
}

// passes mirrors nttKernels.passes.
void passes(const Domain& d, Vec& data, const Vec* src, bool dif, bool inverse, const ScaleT* first) {
  const std::vector<PassArgs>& plan = dif ? d.dif : d.dit;
  for (size_t i = 0; i < plan.size(); i++) {
    const PassArgs& p = plan[i];
    const Vec* from = i == 0 ? src : nullptr;
    const ScaleT* sc = i == 0 ? first : nullptr;
    launch_blocks(p.blocks, p.threads, [&] {
      if (dif) {
        ntt_dif_pass(data.data(), d.w.data(), d.logN, p.lo, p.k, p.logG, p.sh, inverse);
      } else {
        ntt_dit_pass(data.data(), from ? from->data() : nullptr, d.w.data(), d.logN, p.lo, p.k, p.logG, p.sh,
                     inverse, sc ? sc->lo.data() : nullptr, sc ? sc->hi.data() : nullptr, d.s);
      }
    });
  }
}

// transform mirrors nttKernels.transform (kinds: 0 1/n, 1 coset, 2 coset/n,
// 3 inverse coset): dst becomes the transform of src, which is scratch.
void transform(const Domain& d, Vec& dst, Vec& src, bool inverse, bool coset) {
  if (!inverse) {
    passes(d, dst, &src, false, false, coset ? &d.scales[1] : nullptr);
    return;
  }
  passes(d, src, nullptr, true, true, nullptr);
  const ScaleT& sc = d.scales[coset ? 3 : 0];
  elementwise(d.n(), [&] { ntt_bitrev(dst.data(), src.data(), d.logN, sc.lo.data(), sc.hi.data(), sc.s); });
}

// to_coset mirrors nttKernels.toCoset.
void to_coset(const Domain& d, Vec& v) {
  passes(d, v, nullptr, true, true, nullptr);
  passes(d, v, nullptr, false, false, &d.scales[2]);
}

template <class T>
bool read(FILE* f, T* p, size_t n) {
  return fread(p, sizeof(T), n, f) == n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 1;
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  uint32_t h[5];
  if (!in || !out || !read(in, h, 5)) return 1;
  Domain d;
  const uint32_t op = h[0];
  d.logN = h[1];
  d.s = h[2];
  d.dif.resize(h[3]);
  d.dit.resize(h[4]);
  if (!read(in, d.dif.data(), d.dif.size()) || !read(in, d.dit.data(), d.dit.size())) return 2;
  F c[14];
  if (!read(in, c, 14)) return 2;
  const uint32_t n = d.n(), nvec = op >= 4 ? 3 : 1;
  std::vector<Vec> v(nvec, Vec(n));
  for (Vec& x : v)
    if (!read(in, x.data(), n)) return 2;
  // The result vector starts as garbage: every element must be written.
  Vec res(n, F::one());

  // newDomain and scaleOf.
  powers(d.w, c[0], F::one(), n / 2 > 1 ? n / 2 : 1);
  for (int k = 0; k < 4; k++) {
    ScaleT& t = d.scales[k];
    t.s = d.s;
    powers(t.lo, c[1 + 3 * k], F::one(), 1u << d.s);
    powers(t.hi, c[2 + 3 * k], c[3 + 3 * k], 1u << (d.logN - d.s));
  }

  switch (op) {
    case 0:
    case 1:
    case 2:
    case 3:
      transform(d, res, v[0], op == 1 || op == 3, op >= 2);
      break;
    case 4: {
      for (Vec& x : v) to_coset(d, x);
      const F den = c[13];
      elementwise(n, [&] { ntt_quotient(v[0].data(), v[1].data(), v[2].data(), den, n); });
      transform(d, res, v[0], true, true);
      break;
    }
    case 5: {  // the lean quotient: a, b, then c in b's storage
      to_coset(d, v[0]);
      to_coset(d, v[1]);
      elementwise(n, [&] { ntt_mul(v[0].data(), v[1].data(), n); });
      v[1] = v[2];
      to_coset(d, v[1]);
      const F den = c[13];
      elementwise(n, [&] { ntt_sub_scale(v[0].data(), v[1].data(), den, n); });
      transform(d, res, v[0], true, true);
      break;
    }
    default:
      return 1;
  }
  if (fwrite(res.data(), sizeof(F), n, out) != n) return 3;
  return fclose(out) != 0 ? 4 : 0;
}
