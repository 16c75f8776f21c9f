#include "test_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/sha256.h"

namespace test_support {

std::string ArgsJson(bool has_ffts, bool tiled) {
  // Offsets written out by hand from docs/ascend-stack.md, "Launching the kernel" (8-byte
  // pointer slots, then 4-byte ints).
  const int b = has_ffts ? 8 : 0;
  auto slot = [](const std::string &name, const std::string &role, int offset, int size, int index = -1, int dim = -1) {
    std::string s = "{\"name\": \"" + name + "\", \"role\": \"" + role + "\", ";
    if (index >= 0) s += "\"index\": " + std::to_string(index) + ", ";
    if (dim >= 0) s += "\"dim\": " + std::to_string(dim) + ", ";
    return s + "\"offset\": " + std::to_string(offset) + ", \"size\": " + std::to_string(size) + "}";
  };
  std::string slots;
  if (has_ffts) slots += "      " + slot("ffts_base_address", "ffts", 0, 8) + ",\n";
  slots += "      " + slot("sync_block_lock", "sync_block_lock", b + 0, 8) + ",\n";
  slots += "      " + slot("workspace", "workspace", b + 8, 8) + ",\n";
  slots += "      " + slot("a_ptr", "input", b + 16, 8, 0) + ",\n";
  slots += "      " + slot("b_ptr", "input", b + 24, 8, 1) + ",\n";
  slots += "      " + slot("z_ptr", "output", b + 32, 8, 0) + ",\n";
  int at = b + 40;
  if (!tiled) {
    slots += "      " + slot("n_elements", "num_elements", at, 4) + ",\n";
    at += 4;
  } else {
    const char *dims[] = {"d0", "d1", "d2", "rows", "cols"};
    for (int k = 0; k < 5; ++k, at += 4) slots += "      " + slot(dims[k], "dim", at, 4, -1, k) + ",\n";
    for (int i = 0; i < 2; ++i) {
      for (int k = 0; k < 3; ++k, at += 4) {
        slots += "      " + slot(std::string(i ? "b" : "a") + "_stride" + std::to_string(k), "input_stride", at, 4, i, k) + ",\n";
      }
    }
  }
  slots += "      " + slot("gridX", "grid_x", at, 4) + ",\n";
  slots += "      " + slot("gridY", "grid_y", at + 4, 4) + ",\n";
  slots += "      " + slot("gridZ", "grid_z", at + 8, 4) + "\n";
  const int size = (at + 12 + 7) / 8 * 8;
  return "{\n    \"size\": " + std::to_string(size) + ",\n    \"has_ffts\": " + (has_ffts ? "true" : "false") +
         ",\n    \"slots\": [\n" + slots + "    ]\n  }";
}

std::string LeakyReluArgsJson(bool has_ffts) {
  // Offsets written out by hand (docs/kernel-manifest.md, LeakyReluCustom's layout).
  const int b = has_ffts ? 8 : 0;
  auto slot = [](const std::string &name, const std::string &role, int offset, int size, int index = -1) {
    std::string s = "{\"name\": \"" + name + "\", \"role\": \"" + role + "\", ";
    if (index >= 0) s += "\"index\": " + std::to_string(index) + ", ";
    return s + "\"offset\": " + std::to_string(offset) + ", \"size\": " + std::to_string(size) + "}";
  };
  std::string slots;
  if (has_ffts) slots += "      " + slot("ffts_base_address", "ffts", 0, 8) + ",\n";
  slots += "      " + slot("sync_block_lock", "sync_block_lock", b + 0, 8) + ",\n";
  slots += "      " + slot("workspace", "workspace", b + 8, 8) + ",\n";
  slots += "      " + slot("x_ptr", "input", b + 16, 8, 0) + ",\n";
  slots += "      " + slot("y_ptr", "output", b + 24, 8, 0) + ",\n";
  slots += "      " + slot("n_elements", "num_elements", b + 32, 4) + ",\n";
  slots += "      " + slot("alpha", "attr", b + 36, 4, 0) + ",\n";
  slots += "      " + slot("gridX", "grid_x", b + 40, 4) + ",\n";
  slots += "      " + slot("gridY", "grid_y", b + 44, 4) + ",\n";
  slots += "      " + slot("gridZ", "grid_z", b + 48, 4) + "\n";
  const int size = (b + 52 + 7) / 8 * 8;
  return "{\n    \"size\": " + std::to_string(size) + ",\n    \"has_ffts\": " + (has_ffts ? "true" : "false") +
         ",\n    \"slots\": [\n" + slots + "    ]\n  }";
}

std::string ParamsArgsJson(const std::vector<ParamSpec> &params, bool has_ffts) {
  struct Slot {
    std::string name, role;
    int index, size;
  };
  std::vector<Slot> slots;
  if (has_ffts) slots.push_back({"ffts_base_address", "ffts", -1, 8});
  slots.push_back({"sync_block_lock", "sync_block_lock", -1, 8});
  slots.push_back({"workspace", "workspace", -1, 8});
  for (const ParamSpec &p : params) slots.push_back({p.name, p.role, p.index, p.size});
  for (const char *grid : {"grid_x", "grid_y", "grid_z"}) slots.push_back({grid, grid, -1, 4});
  std::string out;
  int at = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot &s = slots[i];
    at = (at + s.size - 1) / s.size * s.size;  // aligned to its own size
    out += "      {\"name\": \"" + s.name + "\", \"role\": \"" + s.role + "\", ";
    if (s.index >= 0) out += "\"index\": " + std::to_string(s.index) + ", ";
    out += "\"offset\": " + std::to_string(at) + ", \"size\": " + std::to_string(s.size) + "}" +
           (i + 1 < slots.size() ? ",\n" : "\n");
    at += s.size;
  }
  return "{\n    \"size\": " + std::to_string((at + 7) / 8 * 8) + ",\n    \"has_ffts\": " +
         (has_ffts ? "true" : "false") + ",\n    \"slots\": [\n" + out + "    ]\n  }";
}

namespace {
std::string Ints(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

std::string BlockJson(const std::string &variant) {
  // The blocks of tf_ge_custom/op_def.py, written out: flat kernels 4096 elements, tiles rows x cols.
  if (variant == "flat" || variant == "scalar") return "[4096]";
  const size_t us = variant.find('_'), x = variant.find('x', us);
  return "[" + variant.substr(us + 1, x - us - 1) + ", " + variant.substr(x + 1) + "]";
}

std::string PythonName(const std::string &op) {
  std::string s;
  for (const char c : op) {
    if (c >= 'A' && c <= 'Z') {
      if (!s.empty()) s += '_';
      s += static_cast<char>(c - 'A' + 'a');
    } else {
      s += c;
    }
  }
  return s;
}

std::string BinaryName(const std::string &variant, const std::string &dtype) {
  return BinaryName("AddCustom", variant, dtype);
}

std::string BinaryName(const std::string &op, const std::string &variant, const std::string &dtype) {
  return PythonName(op) + "_" + variant + "_" + dtype + ".npubin";
}

std::string EntryName(const std::string &variant, const std::string &dtype) {
  return EntryName("AddCustom", variant, dtype);
}

std::string EntryName(const std::string &op, const std::string &variant, const std::string &dtype) {
  return "tf_ge_custom_" + PythonName(op) + "_" + variant + "_" + dtype;
}

namespace {
std::string PythonNameOf(const KernelSpec &k) { return k.python_name.empty() ? PythonName(k.op) : k.python_name; }
}  // namespace

std::string BinaryName(const KernelSpec &k) { return PythonNameOf(k) + "_" + k.variant + "_" + k.dtype + ".npubin"; }

std::string EntryName(const KernelSpec &k) { return "tf_ge_custom_" + PythonNameOf(k) + "_" + k.variant + "_" + k.dtype; }

namespace {
// Appends v as n bytes in the object's byte order.
void Put(std::vector<uint8_t> *out, uint64_t v, size_t n, bool big_endian) {
  for (size_t i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * (big_endian ? n - 1 - i : i))));
}
void PadTo(std::vector<uint8_t> *out, size_t alignment) {
  while (out->size() % alignment != 0) out->push_back(0);
}
}  // namespace

std::vector<uint8_t> ElfObject(const std::vector<ElfSymbolSpec> &symbols, const std::string &payload, bool elf32,
                               bool big_endian, uint32_t table_type, size_t symtab_headers) {
  // Sizes by class (gABI): file header 64/52, section header 64/40, symbol 24/16, word 8/4.
  const size_t ehdr = elf32 ? 52 : 64, shdr = elf32 ? 40 : 64, sym = elf32 ? 16 : 24, word = elf32 ? 4 : 8;
  std::string strtab(1, '\0');
  std::vector<uint32_t> name_at;
  for (const auto &s : symbols) {
    name_at.push_back(static_cast<uint32_t>(strtab.size()));
    strtab += s.name + '\0';
  }
  const std::string shstrtab = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  std::vector<uint8_t> body(ehdr, 0);  // the header, filled in last
  const size_t text_at = body.size();
  body.insert(body.end(), payload.begin(), payload.end());
  PadTo(&body, 8);
  const size_t symtab_at = body.size();
  body.insert(body.end(), sym, 0);  // symbol 0: the null symbol
  // Locals come first in a symbol table (sh_info: the first global); the reader does not
  // rely on it, but a well-formed object keeps it.
  std::vector<size_t> order;
  for (size_t i = 0; i < symbols.size(); ++i) if (symbols[i].binding == 0) order.push_back(i);
  const uint32_t first_global = static_cast<uint32_t>(order.size() + 1);
  for (size_t i = 0; i < symbols.size(); ++i) if (symbols[i].binding != 0) order.push_back(i);
  for (size_t i : order) {
    const auto &s = symbols[i];
    const uint8_t info = static_cast<uint8_t>((s.binding << 4) | (s.type & 0xf));
    const uint16_t shndx = s.defined ? 1 : 0;
    if (elf32) {
      Put(&body, name_at[i], 4, big_endian);
      Put(&body, 0, 4, big_endian);  // st_value
      Put(&body, payload.size(), 4, big_endian);  // st_size
      body.push_back(info);
      body.push_back(static_cast<uint8_t>(s.visibility));  // st_other
      Put(&body, shndx, 2, big_endian);
    } else {
      Put(&body, name_at[i], 4, big_endian);
      body.push_back(info);
      body.push_back(static_cast<uint8_t>(s.visibility));  // st_other
      Put(&body, shndx, 2, big_endian);
      Put(&body, 0, 8, big_endian);
      Put(&body, payload.size(), 8, big_endian);
    }
  }
  const size_t symtab_size = body.size() - symtab_at;
  const size_t strtab_at = body.size();
  body.insert(body.end(), strtab.begin(), strtab.end());
  const size_t shstrtab_at = body.size();
  body.insert(body.end(), shstrtab.begin(), shstrtab.end());
  PadTo(&body, 8);
  const size_t shoff = body.size();
  // name offset in .shstrtab, type, flags, offset, size, link, info, align, entsize
  struct Section { uint32_t name, type; uint64_t flags, offset, size; uint32_t link, info; uint64_t align, entsize; };
  std::vector<Section> sections = {
      {0, 0, 0, 0, 0, 0, 0, 0, 0},
      {1, 1, 6, text_at, payload.size(), 0, 0, 8, 0},                        // .text: PROGBITS, alloc + exec
      {7, table_type, 0, symtab_at, symtab_size, 3, first_global, 8, sym},  // .symtab -> .strtab
      {15, 3, 0, strtab_at, strtab.size(), 0, 0, 1, 0},                      // .strtab
      {23, 3, 0, shstrtab_at, shstrtab.size(), 0, 0, 1, 0},                  // .shstrtab
  };
  for (size_t i = 1; i < symtab_headers; ++i) sections.push_back(sections[2]);
  for (const Section &sec : sections) {
    Put(&body, sec.name, 4, big_endian);
    Put(&body, sec.type, 4, big_endian);
    Put(&body, sec.flags, word, big_endian);
    Put(&body, 0, word, big_endian);  // sh_addr
    Put(&body, sec.offset, word, big_endian);
    Put(&body, sec.size, word, big_endian);
    Put(&body, sec.link, 4, big_endian);
    Put(&body, sec.info, 4, big_endian);
    Put(&body, sec.align, word, big_endian);
    Put(&body, sec.entsize, word, big_endian);
  }
  std::vector<uint8_t> header = {0x7f, 'E', 'L', 'F', static_cast<uint8_t>(elf32 ? 1 : 2),
                                 static_cast<uint8_t>(big_endian ? 2 : 1), 1, 0};
  header.resize(16, 0);
  Put(&header, 1, 2, big_endian);     // e_type: ET_REL
  Put(&header, 0x3e, 2, big_endian);  // e_machine (the reader ignores it)
  Put(&header, 1, 4, big_endian);     // e_version
  Put(&header, 0, word, big_endian);  // e_entry
  Put(&header, 0, word, big_endian);  // e_phoff
  Put(&header, shoff, word, big_endian);
  Put(&header, 0, 4, big_endian);     // e_flags
  Put(&header, ehdr, 2, big_endian);  // e_ehsize
  Put(&header, 0, 2, big_endian);     // e_phentsize
  Put(&header, 0, 2, big_endian);     // e_phnum
  Put(&header, shdr, 2, big_endian);  // e_shentsize
  Put(&header, sections.size(), 2, big_endian);  // e_shnum
  Put(&header, 4, 2, big_endian);     // e_shstrndx
  std::copy(header.begin(), header.end(), body.begin());
  return body;
}

std::vector<uint8_t> FakeBinary(const std::string &soc, const std::string &dtype, const std::string &variant,
                                const std::string &op) {
  KernelSpec k;
  k.op = op;
  k.variant = variant;
  k.dtype = dtype;
  return FakeBinary(soc, k);
}

std::vector<uint8_t> FakeBinary(const std::string &soc, const KernelSpec &k) {
  // AddCustom's payload as it always was; another op's names the op too
  std::string payload = "fake npubin for " + (k.op == "AddCustom" ? "" : k.op + " ") + soc + " " + k.variant + " " +
                        k.dtype + ":";
  for (int i = 0; i < 300; ++i) payload.push_back(static_cast<char>(i * 7 + k.dtype.size() + k.variant.size()));
  return ElfObject({{EntryName(k)}}, payload);
}

std::vector<KernelSpec> AllVariants(const std::string &dtype, bool has_ffts) {
  std::vector<KernelSpec> out;
  for (const char *v : {"flat", "scalar", "row_1x4096", "row_16x256", "row_128x32", "col_1x4096", "col_16x256",
                        "col_128x32", "outer_1x4096", "outer_16x256", "outer_128x32"}) {
    KernelSpec k;
    k.variant = v;
    k.dtype = dtype;
    k.has_ffts = has_ffts;
    out.push_back(k);
  }
  return out;
}

std::vector<KernelSpec> LeakyReluVariants(const std::string &dtype, bool has_ffts) {
  KernelSpec k;
  k.op = "LeakyReluCustom";
  k.variant = "flat";
  k.dtype = dtype;
  k.has_ffts = has_ffts;
  return {k};
}

std::string ManifestJson(const std::string &soc, const std::vector<KernelSpec> &kernels) {
  std::string out = "{\n\"format\": \"tf-ge-custom-kernel-manifest\",\n\"version\": 2,\n\"soc\": \"" + soc +
                    "\",\n\"vector_core_count\": 40,\n"
                    "\"toolchain\": {\"triton_ascend\": \"3.2.0\", \"bishengir\": \"1.2.0\", \"cann\": \"8.5.0\"},\n"
                    "\"kernel_source_sha256\": \"" + std::string(64, 'a') + "\",\n\"kernels\": [\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelSpec &k = kernels[i];
    const bool tiled = k.variant != "flat" && k.variant != "scalar";
    const std::vector<uint8_t> bin = k.binary.empty() ? FakeBinary(soc, k) : k.binary;
    out += " {\n  \"op\": \"" + k.op + "\",\n  \"variant\": \"" + k.variant + "\",\n  \"dtype\": \"" + k.dtype +
           "\",\n  \"entry\": \"" + EntryName(k) + "\",\n";
    if (k.has_binary) {
      out += "  \"binary\": \"" + BinaryName(k) + "\",\n  \"binary_size\": " + std::to_string(bin.size()) +
             ",\n  \"sha256\": \"" + tf_ge_custom::core::Sha256Hex(bin.data(), bin.size()) + "\",\n";
    } else {
      out += "  \"binary\": null,\n  \"binary_size\": null,\n  \"sha256\": null,\n";
    }
    out += "  \"mix_mode\": \"aiv\",\n  \"magic\": \"ELF_VECTOR_CORE\",\n  \"block\": " +
           (k.block.empty() ? BlockJson(k.variant) : Ints(k.block)) +
           ",\n  \"grid\": {\"max_programs\": " + std::to_string(k.max_programs) + ", \"max_grid\": " +
           std::to_string(k.max_grid) + "},\n  \"max_elements_per_launch\": " +
           std::to_string(k.max_elements_per_launch) + ",\n  \"workspace_size\": " + std::to_string(k.workspace_size) +
           ",\n  \"lock_num\": " + std::to_string(k.lock_num) + ",\n  \"lock_init_val\": " +
           std::to_string(k.lock_init_val) + ",\n  \"args\": " +
           (!k.params.empty() ? ParamsArgsJson(k.params, k.has_ffts)
            : k.op == "LeakyReluCustom" ? LeakyReluArgsJson(k.has_ffts) : ArgsJson(k.has_ffts, tiled)) + "\n }" +
           (i + 1 < kernels.size() ? ",\n" : "\n");
  }
  return out + "]\n}\n";
}

std::string Replace(const std::string &text, const std::string &from, const std::string &to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) {
    std::fprintf(stderr, "test data error: '%s' not found\n", from.c_str());
    std::abort();
  }
  return text.substr(0, at) + to + text.substr(at + from.size());
}

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/tf_ge_custom_test_XXXXXX";
  if (mkdtemp(&templ[0]) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  const std::string cmd = "rm -rf '" + path_ + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
}

void TempDir::Write(const std::string &relative, const std::vector<uint8_t> &content) const {
  const std::string full = tf_ge_custom::core::JoinPath(path_, relative);
  const std::string cmd = "mkdir -p '" + tf_ge_custom::core::DirName(full) + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("mkdir failed");
  FILE *f = std::fopen(full.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + full);
  if (!content.empty()) std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
}

void TempDir::Write(const std::string &relative, const std::string &content) const {
  Write(relative, std::vector<uint8_t>(content.begin(), content.end()));
}

std::string WithArchitecture(const std::string &manifest_json, const std::string &architecture) {
  const std::string after = "\"version\": 2,\n";
  const size_t at = manifest_json.find(after);
  if (at == std::string::npos) return manifest_json;
  return manifest_json.substr(0, at + after.size()) + "\"architecture\": \"" + architecture + "\",\n" +
         manifest_json.substr(at + after.size());
}

std::string WriteOppKernels(const TempDir &root, const std::string &soc, const std::vector<KernelSpec> &kernels) {
  const std::string manifest = ManifestJson(soc, kernels);
  root.Write("kernels/" + soc + "/manifest.json", manifest);
  for (const auto &k : kernels) {
    if (!k.has_binary) continue;
    root.Write("kernels/" + soc + "/" + BinaryName(k), k.binary.empty() ? FakeBinary(soc, k) : k.binary);
  }
  return manifest;
}

}  // namespace test_support
