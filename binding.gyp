# CPU-only build of the same addon with node-gyp (CI builds it so it never rots; cmake-js is the main
# build and the only one that adds CUDA). Output: build/Release/ttstore.node.
# -fno-math-errno and -fno-trapping-math let the euler_2d flux rows vectorise and -ffp-contract=off
# keeps FMA out of their AVX-512 build (see euler_flux.cpp). cmake-js sets the three on that file
# alone; gyp has no per-file flags. None of them changes a computed value.
{
  "targets": [
    {
      "target_name": "ttstore",
      "sources": [
        "<!@(node -p \"require('fs').readdirSync('native/core/src', { recursive: true }).filter(f => f.endsWith('.cpp')).sort().map(f => 'native/core/src/' + f).join(' ')\")",
        "<!@(node -p \"require('fs').readdirSync('native/addon').filter(f => f.endsWith('.cpp')).map(f => 'native/addon/' + f).join(' ')\")"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "native/core/include",
        "native/core/src",
        "native/core/internal"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED", "TTS_VERSION=\"0.1.0\""],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-frtti", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"],
      "configurations": { "Release": { "cflags_cc": ["-O3"] } },
      "ldflags": ["-fopenmp"],
      "libraries": ["-llapacke", "-llapack", "-lopenblas", "-lgomp"]
    }
  ]
}
