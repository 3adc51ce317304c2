{
  "targets": [
    {
      "target_name": "arkivector_native",
      "sources": ["src/addon.cc"],
      "include_dirs": ["gen"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-O3", "-std=c++17", "-ffp-contract=off", "-fvisibility=hidden", "-Wno-type-limits", "-Wno-unused-function"],
      "conditions": [
        ["OS=='mac'", {
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
            "OTHER_CPLUSPLUSFLAGS": ["-O3", "-std=c++17", "-ffp-contract=off"]
          }
        }],
        ["OS=='win'", {
          "defines": ["_HAS_EXCEPTIONS=1"],
          "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1 } }
        }]
      ]
    }
  ]
}
