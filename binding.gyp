{
  # Native kernels of the embedded engine (src/engine/kernels/native). Built by `npm install`
  # (package.json "install" script). src/engine/kernels/native/configure.mjs probes the machine:
  # -march=native (override with COOKBOOK_MARCH), -fopenmp-simd (vectorised reductions only; the
  # threads are our own pool), and OpenBLAS (disable with COOKBOOK_OPENBLAS=0).
  "targets": [
    {
      "target_name": "cookbook_kernels",
      "sources": [
        "src/engine/kernels/native/addon.cc",
        "src/engine/kernels/native/gemm.cc",
        "src/engine/kernels/native/ops.cc",
        "src/engine/kernels/native/attention.cc",
        "src/engine/kernels/native/pool.cc",
        "src/engine/kernels/native/addon_decode.cc",
        "src/engine/kernels/native/decode.cc",
        "src/engine/kernels/native/safetensors_map.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "<!@(node src/engine/kernels/native/configure.mjs defines)"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": [
        "-std=c++17",
        "-O3",
        "-Wno-unknown-pragmas",
        "<!@(node src/engine/kernels/native/configure.mjs cflags)"
      ],
      "libraries": ["<!@(node src/engine/kernels/native/configure.mjs libs)"],
      "conditions": [
        ["OS=='mac'", {
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "OTHER_CPLUSPLUSFLAGS": ["-O3", "<!@(node src/engine/kernels/native/configure.mjs cflags)"]
          }
        }]
      ]
    }
  ]
}
