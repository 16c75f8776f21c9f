"""The builder's process handling: without hivmc, with a hivmc double (a stand-in script
for CANN's hivmc: it only tests how the builder runs it and uses its output), the CLI,
and the readers of the emitted IR."""
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from tf_ge_custom import cli, kernel_manifest, op_def
from tf_ge_custom.errors import KernelBuildError, ToolchainError
from tf_ge_custom.kernels import bishengir, builder, hivm_ir, toolchain

# the ops of the records beyond the two shipped ones (none in this tree; an op added as
# docs/adding-an-op.md says): their kernels join every set the tests below build
OTHER_OPS = [op for op in op_def.OPS if op not in (op_def.ADD_CUSTOM, op_def.LEAKY_RELU_CUSTOM)]
# the variants the rebuild test asks for; each op builds those of them it has
WANTED = ("flat", "scalar")


def _npubins(ops, dtypes, variants=None):
    """The npubin names of ``ops``' kernels for each of ``dtypes`` the op has (``variants``:
    only those of these names), as docs/kernel-manifest.md names them."""
    return ["%s_%s_%s.npubin" % (op.python_name, v.name, d) for op in ops for d in dtypes if d in op.dtypes
            for v in op.kernel.variants if variants is None or v.name in variants]

# The double answers --version as hivmc does, then compiles, with this machine's C compiler,
# an object <-o>.o defining a global function for every func.func of the HIVM IR it was given
# (so the kernel's entry) and holding the sha256 of that IR as a string, so a test can tell
# which IR each npubin came from. HIVMC_DOUBLE_SYMBOL makes it get the symbol wrong: "wrong"
# (the old shared name add_kernel instead), "mix_aiv" (the entry + _mix_aiv, which the runtime
# also finds), "stripped" (then strip --strip-all), "not_elf" (the bare sha line), "truncated"
# (the object cut in half). (bishengir-compile passes hivmc no --target: the A2 and A3 HIVM IR
# of this kernel are byte-identical.)
HIVMC_DOUBLE = textwrap.dedent("""\
    #!{python}
    import hashlib, os, re, subprocess, sys
    args = sys.argv[1:]
    if args == ["--version"]:
        print("hivmc 0.0.0 (0123456 2026-01-01)")
        sys.exit(0)
    if os.environ.get("HIVMC_DOUBLE_FAIL"):
        sys.stderr.write("hivmc double: simulated failure\\n")
        sys.exit(3)
    out = args[args.index("-o") + 1] + ".o"
    with open(args[0], "rb") as f:
        ir = f.read()
    marker = "hivmc-double:%s" % hashlib.sha256(ir).hexdigest()
    mode = os.environ.get("HIVMC_DOUBLE_SYMBOL", "entry")
    if mode == "not_elf":
        with open(out, "wb") as f:
            f.write(marker.encode())
        sys.exit(0)
    names = list(dict.fromkeys(m.decode() for m in re.findall(rb"func\\.func\\s+@([A-Za-z_]\\w*)", ir)))
    if mode == "wrong":
        names = ["add_kernel"]
    elif mode == "mix_aiv":
        names = [n + "_mix_aiv" for n in names]
    source = out[:-2] + ".double.c"
    with open(source, "w") as f:
        f.write('const char hivmc_double_ir[] = "%s";\\n' % marker)
        f.writelines("void %s(void) {{}}\\n" % n for n in names)
    subprocess.run([{cc!r}, "-x", "c", "-c", "-o", out, source], check=True)
    os.remove(source)
    if mode == "stripped":
        subprocess.run([{strip!r}, "--strip-all", out], check=True)
    elif mode == "truncated":
        with open(out, "rb") as f:
            data = f.read()
        with open(out, "wb") as f:
            f.write(data[:len(data) // 2])
    """)
C_COMPILER = shutil.which("cc") or shutil.which("gcc")
STRIP = shutil.which("strip")


def _env_without_hivmc():
    env = {k: v for k, v in os.environ.items() if k != "BISHENG_INSTALL_PATH"}
    assert toolchain.find_hivmc(env) is None, "these tests expect a host without CANN"
    return env


@pytest.fixture
def hivmc_env(tmp_path):
    bindir = tmp_path / "cann-bin"
    bindir.mkdir()
    double = bindir / "hivmc"
    assert C_COMPILER and STRIP, "the hivmc double needs this machine's C compiler and strip"
    double.write_text(HIVMC_DOUBLE.format(python=sys.executable, cc=C_COMPILER, strip=STRIP))
    double.chmod(double.stat().st_mode | stat.S_IEXEC)
    home = tmp_path / "ascend-toolkit"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text("Version=8.5.0\nplatform=x86_64\n")
    env = _env_without_hivmc()
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env.get("PATH", ""))
    env["ASCEND_HOME_PATH"] = str(home)
    return env


def test_without_hivmc_the_build_is_refused_before_its_first_stage_naming_ir_only(tmp_path, monkeypatch):
    out = tmp_path / "out"
    events = []
    loaded = []
    monkeypatch.setattr(builder.frontend, "load_kernel", lambda *a, **k: loaded.append(a))
    monkeypatch.setattr(toolchain, "check_triton_ascend", lambda: loaded.append("triton"))
    with pytest.raises(ToolchainError) as e:
        builder.build_kernels(["Ascend910B1", "Ascend910_9392"], ["float32", "bfloat16"],
                              str(out), progress=events.append, env=_env_without_hivmc(),
                              variants=["flat", "col_16x256"])
    assert e.value.missing == ("hivmc",)
    assert str(e.value).startswith("hivmc is missing, so nothing was compiled: hivmc turns HIVM IR into npubins")
    assert "--ir-only" in str(e.value) and "CANN" in str(e.value)
    assert events == [] and loaded == []  # no stage ran, triton was not even imported
    assert not out.exists()  # nothing half-written


def test_with_hivmc_double_npubins_and_checksums_come_from_its_output(tmp_path, hivmc_env):
    out = tmp_path / "out"
    result = builder.build_kernels(["Ascend910B1", "Ascend910_9392"], ["float32", "int32"],
                                   str(out), env=hivmc_env)
    variants = [v.name for v in op_def.ADD_CUSTOM.kernel.variants]
    for soc in ("Ascend910B1", "Ascend910_9392"):
        m = kernel_manifest.load_manifest(result.manifests[soc])  # checks every checksum
        assert not m.ir_only and m.toolchain["cann"] == "8.5.0"
        for dtype in ("float32", "int32"):
            assert not m.missing_variants(op_def.ADD_CUSTOM, dtype)
            for variant in variants:
                k = m.kernel("AddCustom", variant, dtype)
                stem = "add_custom_%s_%s" % (variant, dtype)
                with open(os.path.join(str(out), soc, "ir", stem + ".hivm.mlir"), "rb") as f:
                    ir_sha = hashlib.sha256(f.read()).hexdigest()
                assert k.binary == stem + ".npubin"
                data = (out / soc / k.binary).read_bytes()
                # the npubin is what hivmc made from exactly the IR the layout was read from,
                # and defines the entry the manifest names (readelf reads it so too)
                assert ("hivmc-double:%s" % ir_sha).encode() in data
                assert data.startswith(b"\x7fELF")
                assert k.entry == op_def.ADD_CUSTOM.entry_name(variant, dtype)
                assert k.sha256 == hashlib.sha256(data).hexdigest() and k.binary_size == len(data)
        # and LeakyReluCustom's float32 kernel (it has no int32), from its own source
        leaky = m.kernel("LeakyReluCustom", "flat", "float32")
        assert leaky.entry == "tf_ge_custom_leaky_relu_custom_flat_float32"
        assert m.source_sha256("LeakyReluCustom") != m.source_sha256("AddCustom")
        # every op of the records with each of the two dtypes it has, each variant its npubin
        assert sorted(os.listdir(str(out / soc))) == sorted(
            ["add_custom_%s_%s.npubin" % (v, d) for v in variants for d in ("float32", "int32")]
            + ["leaky_relu_custom_flat_float32.npubin", "ir", "manifest.json"]
            + _npubins(OTHER_OPS, ("float32", "int32")))


def test_a_failing_hivmc_fails_the_build_and_keeps_the_old_output(tmp_path, hivmc_env):
    out = tmp_path / "out"
    builder.build_kernels(["Ascend910B1"], ["float32"], str(out), env=hivmc_env, variants=["flat"])
    before = (out / "Ascend910B1" / "manifest.json").read_bytes()
    hivmc_env["HIVMC_DOUBLE_FAIL"] = "1"
    with pytest.raises(KernelBuildError) as e:
        builder.build_kernels(["Ascend910B1"], ["float32", "int32"], str(out), env=hivmc_env,
                              variants=["flat"])
    assert "simulated failure" in str(e.value) and "Ascend910B1" in str(e.value)
    assert (out / "Ascend910B1" / "manifest.json").read_bytes() == before
    assert sorted(os.listdir(str(out))) == ["Ascend910B1"]  # no staging left behind


def test_a_rebuild_replaces_the_soc_folder_whole(tmp_path, hivmc_env):
    out = tmp_path / "out"
    build = dict(env=hivmc_env, variants=["flat", "scalar"])
    builder.build_kernels(["Ascend910B1"], ["float32", "int32"], str(out), **build)
    builder.build_kernels(["Ascend910B1"], ["float16"], str(out), **build)
    # each op with the variants of those it has: LeakyReluCustom has flat only
    assert sorted(os.listdir(str(out / "Ascend910B1"))) == sorted([
        "add_custom_flat_float16.npubin", "add_custom_scalar_float16.npubin", "ir",
        "leaky_relu_custom_flat_float16.npubin", "manifest.json"] + _npubins(OTHER_OPS, ("float16",), WANTED))
    # a file the build did not write is refused, by name, unless forced
    (out / "Ascend910B1" / "stale.npubin").write_bytes(b"old")
    with pytest.raises(ValueError, match="stale.npubin"):
        builder.build_kernels(["Ascend910B1"], ["int32"], str(out), **build)
    assert (out / "Ascend910B1" / "stale.npubin").read_bytes() == b"old"
    builder.build_kernels(["Ascend910B1"], ["int32"], str(out), force=True, **build)
    # of the shipped ops int32 is AddCustom's alone: the set holds its kernels (and those of any
    # op added to the records with int32), and a set of one op's kernels records its source alone
    int32_ops = [op for op in op_def.OPS if "int32" in op.dtypes]
    assert int32_ops[0] is op_def.ADD_CUSTOM and op_def.LEAKY_RELU_CUSTOM not in int32_ops
    assert sorted(os.listdir(str(out / "Ascend910B1"))) == sorted([
        "add_custom_flat_int32.npubin", "add_custom_scalar_int32.npubin", "ir", "manifest.json"]
        + _npubins(OTHER_OPS, ("int32",), WANTED))
    alone = kernel_manifest.load_manifest(str(out / "Ascend910B1" / "manifest.json"))
    assert ("kernel_sources" in alone.document) == (len(int32_ops) > 1)
    assert [k.op for k in alone.kernels] == ["AddCustom"] * 2 + [
        op.type_name for op in int32_ops[1:] for v in op.kernel.variants if v.name in WANTED]
    with pytest.raises(ValueError, match="no kernel variant 'row_8x512'"):
        builder.build_kernels(["Ascend910B1"], ["int32"], str(out), env=hivmc_env,
                              variants=["row_8x512"])


@pytest.mark.parametrize("socs, dtypes, message", [
    ("Ascend910B9", "all", "unsupported SoC"),
    ("", "all", "no SoC"),
    ("Ascend910B1", "float64", "has dtype 'float64'"),
    # the refusal lists the board names it accepts too (kernels/socs.py ALIASES)
    ("Ascend910B4-2", "all", "board names served by one of them: Ascend910B4-1 (by Ascend910B4), "
                             "Ascend910_9361 (by Ascend910_9362)"),
])
def test_bad_soc_or_dtype_is_refused_before_compiling(tmp_path, socs, dtypes, message):
    with pytest.raises(ValueError) as e:
        builder.build_kernels(socs, dtypes, str(tmp_path / "out"))
    assert message in str(e.value)


def test_a_board_name_builds_the_soc_serving_it_once():
    # finding 1: these names were refused ("unsupported SoC") before board names were known
    assert builder.parse_socs("Ascend910B4-1,Ascend910B4,Ascend910_9361") == ["Ascend910B4", "Ascend910_9362"]


def _console_script(*args, **kw):
    """The installed ``tf-ge-custom`` entry point, run as a user would."""
    exe = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    return subprocess.run([exe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600, **kw)


def test_cli_without_hivmc_prints_one_error_and_no_progress(tmp_path):
    proc = _console_script("build-kernels", "--soc", "Ascend910B1", "--dtype", "float32,int32",
                "--out", str(tmp_path / "out"), env=_env_without_hivmc())
    assert proc.returncode == 1
    ours = [l for l in proc.stderr.splitlines() if l.startswith(("[", "tf-ge-custom"))]
    assert len(ours) == 1 and ours[0].startswith("tf-ge-custom build-kernels: error: hivmc is missing")
    assert ours[0].endswith("pass --ir-only")
    assert not (tmp_path / "out").exists()


def test_cli_ir_only_prints_one_progress_line_per_soc_and_dtype(tmp_path):
    proc = _console_script("build-kernels", "--ir-only", "--soc", "Ascend910B1", "--dtype", "float32,int32",
                           "--out", str(tmp_path / "out"), env=_env_without_hivmc())
    assert proc.returncode == 0, proc.stderr
    ours = [l for l in proc.stderr.splitlines() if l.startswith(("[", "tf-ge-custom"))]
    # one line per (op, dtype) the op has, the op named, every op of the records in order
    sets = [(op.type_name, d) for op in op_def.OPS for d in ("float32", "int32") if d in op.dtypes]
    assert sets[:3] == [("AddCustom", "float32"), ("AddCustom", "int32"), ("LeakyReluCustom", "float32")]
    assert [l.split()[:4] for l in ours] == [["[%d/%d]" % (i + 1, len(sets)), "Ascend910B1", op, d]
                                             for i, (op, d) in enumerate(sets)]
    # each line names the variants compiled for that (SoC, op, dtype)
    names = " ".join(v.name for v in op_def.ADD_CUSTOM.kernel.variants)
    assert "11 variants (%s): TTIR, linalg, HIVM IR; no npubins" % names in ours[0]
    assert "1 variants (flat): TTIR, linalg, HIVM IR; no npubins" in ours[2]


@pytest.mark.documents("tf-ge-custom build-kernels --ir-only")
def test_cli_ir_only_then_list_kernels(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert cli.main(["build-kernels", "--ir-only", "--soc", "Ascend910_9392",
                     "--dtype", "int32,float16", "--out", out, "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "Ascend910_9392: %s (IR only, no npubins)" % (
        os.path.join(out, "Ascend910_9392", "manifest.json"))
    assert cli.main(["list-kernels", "--dir", out]) == 0
    listed = capsys.readouterr().out
    assert "Ascend910_9392" in listed and "float16 int32 " in listed
    # an IR-only folder does not count as carrying kernels for that SoC
    assert cli.main(["list-kernels", "--dir", out, "--soc", "Ascend910_9392"]) == 1
    assert "IR-only manifest" in capsys.readouterr().err


def test_cli_rejects_an_unknown_soc_with_usage_status(tmp_path, capsys):
    assert cli.main(["build-kernels", "--soc", "Ascend310P3", "--out", str(tmp_path)]) == 2
    assert "unsupported SoC 'Ascend310P3'" in capsys.readouterr().err


def test_bishengir_command_targets_the_given_soc_with_tritons_options():
    from triton.backends.ascend.compiler import NPUOptions

    cmd = bishengir.command("bishengir-compile", "k.mlir", "Ascend910_9392", "/w", NPUOptions())
    assert cmd[:3] == ["bishengir-compile", "k.mlir", "--target=Ascend910_9392"]
    assert "--enable-auto-multi-buffer=true" in cmd and "--enable-auto-bind-sub-block=true" in cmd
    assert cmd[-3:] == ["--save-temps=/w", "-o", "/w/kernel"]


def test_cann_version_and_hivmc_lookup(tmp_path):
    home = tmp_path / "toolkit"
    home.mkdir()
    assert toolchain.cann_version({"ASCEND_HOME_PATH": str(home)}) is None
    (home / "ascend_toolkit_install.info").write_text("package_name=x\nversion=8.5.0.alpha\n")
    assert toolchain.cann_version({"ASCEND_HOME_PATH": str(home)}) == "8.5.0.alpha"
    assert toolchain.cann_version({}) is None
    tool = tmp_path / "hivmc"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert toolchain.find_hivmc({"BISHENG_INSTALL_PATH": str(tmp_path), "PATH": ""}) == str(tool)
    assert toolchain.find_hivmc({"PATH": str(tmp_path)}) == str(tool)


IR_TEMPLATE = """module {
  func.func @k_infer_workspace_shape_function() -> i64 attributes {hacc.function_kind = #hacc.function_kind<HOST>, hacc.host_func_type = #hacc.host_func_type<infer_workspace_shape_function>} {
%s
  }
  func.func @k(%%arg0: i64 {hacc.arg_type = #hacc.arg_type<%s>}, %%arg1: memref<?xf32, #hivm.address_space<gm>> {tt.tensor_kind = 0 : i32}) attributes {hacc.entry, hacc.function_kind = #hacc.function_kind<DEVICE>} {
    return
  }
}
"""


def test_ir_reader_takes_constant_callbacks_and_refuses_computed_ones():
    const = IR_TEMPLATE % ("    %c512_i64 = arith.constant 512 : i64\n    return %c512_i64 : i64",
                           "ffts_base_address")
    assert hivm_ir.host_constant(const, "infer_workspace_shape_function") == 512
    assert hivm_ir.host_constant(const, "infer_sync_block_lock_num_function") is None
    entry = hivm_ir.find_entry(const, "k")
    assert [(a.arg_type, a.tensor_kind, a.size) for a in entry.args] == [
        ("ffts_base_address", None, 8), (None, 0, 8)]
    computed = IR_TEMPLATE % ("    %0 = call @f() : () -> i64\n    return %0 : i64",
                              "ffts_base_address")
    with pytest.raises(KernelBuildError, match="does not return a constant"):
        hivm_ir.host_constant(computed, "infer_workspace_shape_function")
    with pytest.raises(KernelBuildError, match="no device entry @other"):
        hivm_ir.find_entry(const, "other")


def test_callbacks_library_must_agree_with_the_ir(tmp_path):
    if shutil.which("cc") is None:
        pytest.fail("a C compiler (cc) is needed to build the callback-library double")
    src = tmp_path / "cb.c"
    src.write_text("long long add_kernel_infer_workspace_shape_function(void) { return 256; }\n")
    lib = tmp_path / "libkernel.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    agree = {"workspace_size": 256, "lock_num": None, "lock_init_val": None}
    builder._check_callbacks(str(lib), "add_kernel", agree, "Ascend910B1")
    with pytest.raises(KernelBuildError, match="returns 256 but the HIVM IR says 0"):
        builder._check_callbacks(str(lib), "add_kernel", dict(agree, workspace_size=0),
                                 "Ascend910B1")


@pytest.mark.parametrize("mode, said", [
    ("wrong", "defines no global function tf_ge_custom_add_custom_flat_float32 or "
              "tf_ge_custom_add_custom_flat_float32_mix_aiv (its global functions: add_kernel)"),
    ("stripped", "has no symbol table (stripped?)"),
    ("not_elf", "is not an ELF file"),
    ("truncated", "is a cut or damaged ELF file"),
])
def test_an_npubin_that_does_not_define_its_entry_is_refused_before_any_manifest(
        tmp_path, hivmc_env, mode, said):
    """Real objects of this machine's C compiler, from the hivmc double: one naming another
    function, stripped, not ELF, cut in half. The build fails naming the npubin, the entry
    and what the file holds; the output folder keeps what it had."""
    out = tmp_path / "out"
    builder.build_kernels(["Ascend910B1"], ["float32"], str(out), env=hivmc_env, variants=["flat"])
    before = (out / "Ascend910B1" / "manifest.json").read_bytes()
    hivmc_env["HIVMC_DOUBLE_SYMBOL"] = mode
    with pytest.raises(KernelBuildError) as e:
        builder.build_kernels(["Ascend910B1"], ["float32"], str(out), env=hivmc_env,
                              variants=["flat"])
    message = str(e.value)
    assert "Ascend910B1: the npubin hivmc wrote for AddCustom flat float32" in message
    assert said in message
    assert (out / "Ascend910B1" / "manifest.json").read_bytes() == before
    assert sorted(os.listdir(str(out))) == ["Ascend910B1"]


def test_an_npubin_defining_the_entry_with_the_mix_aiv_suffix_is_accepted(tmp_path, hivmc_env):
    """The runtime finds a vector-core kernel under its entry or the entry + _mix_aiv
    (hicann/runtime): a manifest naming the entry is written, readelf sees the suffixed name."""
    hivmc_env["HIVMC_DOUBLE_SYMBOL"] = "mix_aiv"
    result = builder.build_kernels(["Ascend910B1"], ["float16"], str(tmp_path / "out"),
                                   env=hivmc_env, variants=["flat"])
    m = kernel_manifest.load_manifest(result.manifests["Ascend910B1"])
    k = m.kernel("AddCustom", "flat", "float16")
    assert k.entry == "tf_ge_custom_add_custom_flat_float16"
    symbols = subprocess.run(["readelf", "-sW", m.binary_path(k)], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
    assert " tf_ge_custom_add_custom_flat_float16_mix_aiv" in symbols
    assert " tf_ge_custom_add_custom_flat_float16\n" not in symbols
