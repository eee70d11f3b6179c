// Build-time probe for binding.gyp: which compiler flags this machine supports.
// Usage: node configure.mjs defines|cflags|libs   (prints a space-separated list for gyp's <!@(...)).
//        node configure.mjs fingerprint            (what the probe's answers depend on, found without
//                                                   compiling: scripts/installNative.mjs keys its build
//                                                   stamp on it, so an unchanged machine costs no probe)
//
// Each feature is detected by compiling a tiny test program, so a header without its library (or
// a compiler without -fopenmp-simd) is simply left out instead of failing the build.
//   COOKBOOK_OPENBLAS=0    build without OpenBLAS even when it is installed (own packed GEMM only)
//   COOKBOOK_MARCH=<arch>  target this -march instead of the building machine's own CPU ("native");
//                          use e.g. x86-64-v3 when the binary will run on other machines
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const what = process.argv[2];
const cxx = process.env.CXX || "c++";
const dir = mkdtempSync(join(tmpdir(), "cookbook-configure-"));

function compiles(source, flags) {
  const src = join(dir, "probe.cc");
  writeFileSync(src, source);
  const r = spawnSync(cxx, ["-std=c++17", src, "-o", join(dir, "probe"), ...flags], { stdio: "ignore" });
  return r.status === 0;
}

function archFlags() {
  const requested = process.env.COOKBOOK_MARCH;
  const candidates = requested ? [[`-march=${requested}`]] : [["-march=native"], ["-mcpu=native"], []];
  for (const flags of candidates) if (compiles("int main() { return 0; }\n", flags)) return flags;
  return [];
}

// Only the `#pragma omp simd` hints (vectorised reductions); no OpenMP runtime is linked.
function simdFlags() {
  return compiles("int main() { return 0; }\n", ["-fopenmp-simd"]) ? ["-fopenmp-simd"] : [];
}

/** The compiler's identity and, for each place OpenBLAS could come from, what is there now. */
function fingerprint() {
  let compiler = "";
  try {
    compiler = execFileSync(cxx, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    compiler = "none";
  }
  const seen = (path) => {
    try {
      const st = statSync(path);
      return `${path}:${st.size}:${st.mtimeMs}`;
    } catch {
      return `${path}:absent`;
    }
  };
  const places = openblasCandidates().flatMap(({ cflags, libs }) => [
    ...cflags.filter((f) => f.startsWith("-I")).map((f) => seen(join(f.slice(2), "cblas.h"))),
    ...libs.filter((f) => f.startsWith("-L")).map((f) => seen(f.slice(2))),
    cflags.length === 0 ? seen("/usr/include/cblas.h") : "",
  ]);
  return { cxx, compiler, march: process.env.COOKBOOK_MARCH ?? "", openblas: process.env.COOKBOOK_OPENBLAS ?? "", places };
}

function pkgConfig(args) {
  try {
    return execFileSync("pkg-config", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return null;
  }
}

function openblasCandidates() {
  const candidates = [];
  const pcCflags = pkgConfig(["--cflags", "openblas"]);
  const pcLibs = pkgConfig(["--libs", "openblas"]);
  if (pcCflags !== null && pcLibs !== null) candidates.push({ cflags: pcCflags, libs: pcLibs });
  for (const prefix of ["/opt/homebrew/opt/openblas", "/usr/local/opt/openblas"]) {
    candidates.push({ cflags: [`-I${prefix}/include`], libs: [`-L${prefix}/lib`, "-lopenblas"] });
  }
  candidates.push({ cflags: ["-I/usr/include/openblas"], libs: ["-lopenblas"] });
  candidates.push({ cflags: [], libs: ["-lopenblas"] });
  return candidates;
}

/** { cflags, libs } for OpenBLAS, or null. */
function openblas() {
  if (process.env.COOKBOOK_OPENBLAS === "0") return null;
  const candidates = openblasCandidates();
  const src = [
    "#include <cblas.h>",
    "int main() {",
    "  float a = 1, b = 2, c = 0;",
    "  openblas_set_num_threads(1);",
    "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);",
    "  return c == 2 ? 0 : 1;",
    "}",
  ].join("\n");
  for (const c of candidates) {
    if (!compiles(src, [...c.cflags, ...c.libs])) continue;
    // Libraries outside the loader's default path (Homebrew, custom prefixes) need an rpath.
    const rpaths = c.libs.filter((f) => f.startsWith("-L")).map((f) => `-Wl,-rpath,${f.slice(2)}`);
    return { cflags: c.cflags, libs: [...c.libs, ...rpaths] };
  }
  return null;
}

let out = [];
try {
  if (what === "fingerprint") {
    out = [JSON.stringify(fingerprint())];
  } else if (what === "defines") {
    if (openblas() !== null) out = ["CK_HAVE_OPENBLAS"];
  } else if (what === "cflags") {
    out = [...archFlags(), ...simdFlags(), ...(openblas()?.cflags ?? [])];
  } else if (what === "libs") {
    out = openblas()?.libs ?? [];
  } else {
    console.error(`configure.mjs: expected "defines", "cflags", "libs" or "fingerprint", got ${JSON.stringify(what)}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(out.join(" ") + "\n");
