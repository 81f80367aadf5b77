"""Stand-in for @rules_cc//cc:defs.bzl: re-exports the native C++ rules.

Bazel 4.2.3's own @bazel_tools (tools/cpp/BUILD and the auto-configured C++ toolchain) loads
`@rules_cc//cc:defs.bzl`, and would download rules_cc for it, which cannot happen offline.
Debian's bazel-rules-cc 0.0.4 is too new for 4.2.3 (`use_cpp_toolchain` is missing there), so
this repository answers with the native rules, which is all 4.2.3 needs.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_shared_library = getattr(native, "cc_shared_library", None)
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_import = native.objc_import
objc_library = native.objc_library
