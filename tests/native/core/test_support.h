// Test data for the core's tests and the fuzz driver: manifests written out by hand-readable
// templates (not by the code under test), fake npubins, temporary OPP roots.
#ifndef TF_GE_CUSTOM_TESTS_TEST_SUPPORT_H_
#define TF_GE_CUSTOM_TESTS_TEST_SUPPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace test_support {

// The A2/A3 layouts as triton-ascend emits them: 8-byte ffts, lock, workspace, a, b, out, then
// for the flat kernels int32 n_elements (64 bytes with ffts, 56 without: the GE sample's A2),
// for the tiled ones 5 int32 extents and 2 x 3 int32 strides (104 bytes; 96 without ffts);
// then int32 gridX/Y/Z.
std::string ArgsJson(bool has_ffts, bool tiled = false);

// LeakyReluCustom's layout as triton-ascend emits it for leaky_relu_kernel(x_ptr, y_ptr,
// n_elements, alpha): 8-byte ffts, lock, workspace, x, y, then int32 n_elements, the fp32
// alpha (an "attr" slot of index 0), int32 gridX/Y/Z: 64 bytes with ffts (60 padded), 56
// without.
std::string LeakyReluArgsJson(bool has_ffts);

// The block of a variant of AddCustom, as JSON ("[4096]", "[16, 256]").
std::string BlockJson(const std::string &variant);

// One runtime parameter of a kernel, as a manifest's layout holds it: its role ("input",
// "output", "num_elements", "attr"), its index (the operand, or the attribute's position; -1
// for none) and its bytes. The flat variant of any op is these, in the record's order.
struct ParamSpec {
  std::string name;  // the slot's name in the manifest ("input:0", "attr:alpha")
  std::string role;
  int index = -1;
  int size = 8;
};

// The layout of a kernel whose runtime parameters are params, packed as triton-ascend packs an
// entry (docs/kernel-manifest.md, "Host-argument layout"): ffts (when has_ffts), lock and
// workspace (8 bytes each), the parameters in order, gridX/Y/Z (4 bytes each), each slot at an
// offset aligned to its own size, the struct rounded up to 8 bytes. Any op's flat variant,
// without a layout written out per op.
std::string ParamsArgsJson(const std::vector<ParamSpec> &params, bool has_ffts);

struct KernelSpec {
  // AddCustom or LeakyReluCustom (their layouts are written out here), or any op whose params
  // are given (its layout by ParamsArgsJson)
  std::string op = "AddCustom";
  // the op's Python name, which names its npubins and entries; "": PythonName(op)
  std::string python_name;
  std::vector<ParamSpec> params;
  std::vector<int64_t> block;  // elements per loop iteration; empty: AddCustom's (BlockJson)
  std::string variant = "flat";
  std::string dtype = "float32";
  bool has_binary = true;
  std::vector<uint8_t> binary;  // bytes of the npubin (sha256/size are computed from these)
  bool has_ffts = true;
  int64_t max_programs = 40;
  int64_t max_grid = 65535;
  int64_t max_elements_per_launch = int64_t{1} << 30;
  int64_t workspace_size = 0;
  int64_t lock_num = 0;
  int64_t lock_init_val = 0;
};

// A valid manifest on soc with the given kernels (AddCustom's unless a spec names another op),
// one key per line in a fixed order, so tests can edit it with Replace().
std::string ManifestJson(const std::string &soc, const std::vector<KernelSpec> &kernels);
// The same manifest recording an architecture ("dav-2201"), as the builder writes it now.
std::string WithArchitecture(const std::string &manifest_json, const std::string &architecture);

// The bytes of a fake npubin, distinct per (soc, variant, dtype): an ELF file (ElfObject) whose
// one function is the kernel's entry symbol, with a payload naming (soc, variant, dtype).
std::vector<uint8_t> FakeBinary(const std::string &soc, const std::string &dtype, const std::string &variant = "flat",
                                const std::string &op = "AddCustom");
// The same for a spec (its op's Python name naming the entry symbol).
std::vector<uint8_t> FakeBinary(const std::string &soc, const KernelSpec &k);

// A minimal ELF relocatable object written out field by field from the ELF specification
// (System V gABI), not by the reader under test: sections null, .text (payload), .symtab,
// .strtab, .shstrtab; each function a symbol of .text with the given binding (1 global, 0
// local) and type FUNC. 64-bit little-endian unless elf32 / big_endian.
struct ElfSymbolSpec {
  std::string name;
  int binding = 1;
  bool defined = true;  // false: SHN_UNDEF (a reference, not a definition)
  int type = 2;         // STT_FUNC; 1 is STT_OBJECT
  int visibility = 0;   // st_other: STV_DEFAULT; 2 STV_HIDDEN, 3 STV_PROTECTED
};
// table_type: the symbol table's sh_type (2 SHT_SYMTAB; 11 SHT_DYNSYM, a library whose .symtab
// was stripped); symtab_headers: how many section headers name that one table (a crafted object
// for the reader's time).
std::vector<uint8_t> ElfObject(const std::vector<ElfSymbolSpec> &symbols, const std::string &payload,
                               bool elf32 = false, bool big_endian = false, uint32_t table_type = 2,
                               size_t symtab_headers = 1);

// The op's Python name, its type in snake case: add_custom, leaky_relu_custom.
std::string PythonName(const std::string &op);

// The npubin name of (variant, dtype): add_custom_<variant>_<dtype>.npubin (another op's:
// <python name>_<variant>_<dtype>.npubin).
std::string BinaryName(const std::string &variant, const std::string &dtype);
std::string BinaryName(const std::string &op, const std::string &variant, const std::string &dtype);

// The kernel's entry symbol of (variant, dtype): tf_ge_custom_add_custom_<variant>_<dtype>
// (docs/kernel-manifest.md, "Entry names"; another op's: tf_ge_custom_<python name>_...),
// written out here, not taken from the op table.
std::string EntryName(const std::string &variant, const std::string &dtype);
std::string EntryName(const std::string &op, const std::string &variant, const std::string &dtype);
// A spec's npubin and entry, named by its python_name where it has one.
std::string BinaryName(const KernelSpec &k);
std::string EntryName(const KernelSpec &k);

// Every variant of AddCustom for dtype, as specs (the complete set a build writes).
std::vector<KernelSpec> AllVariants(const std::string &dtype, bool has_ffts = true);
// LeakyReluCustom's kernel set for dtype: its one variant, flat.
std::vector<KernelSpec> LeakyReluVariants(const std::string &dtype, bool has_ffts = true);

// text with the first occurrence of from replaced by to; aborts the test run if absent.
std::string Replace(const std::string &text, const std::string &from, const std::string &to);

// A fresh temporary folder, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }
  // Writes path()/relative (creating folders).
  void Write(const std::string &relative, const std::string &content) const;
  void Write(const std::string &relative, const std::vector<uint8_t> &content) const;

 private:
  std::string path_;
};

// Writes <root>/kernels/<soc>/manifest.json and the binaries of kernels; returns the manifest.
std::string WriteOppKernels(const TempDir &root, const std::string &soc, const std::vector<KernelSpec> &kernels);

}  // namespace test_support

#endif  // TF_GE_CUSTOM_TESTS_TEST_SUPPORT_H_
