#!/usr/bin/python3
"""End-to-end: bad input to the shardops command (ctest e2e_bad_inputs_np_3).

Every bad input gets its exit code (docs/cli.md) (2 bad input or usage, 3 I/O),
its message (TensorFlow's text where TF has one, and the dataset it is about) printed once
by rank 0, and leaves the output path as it was (file bytes identical, or still absent, and
no temporary file left beside it). No run may hang: each is killed after --timeout seconds
and fails. Bad indices are placed on one rank's block only as well as on several, to show
the error is agreed across ranks.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import h5py  # noqa: E402

from e2e_common import (Shardops, Suite, dir_listing, error_lines, file_state, parse_args, ref,  # noqa: E402
                        work_dir, write_h5)


class BadCase:
    def __init__(self, name, argv, rc, messages, out=None, max_seconds=None, datasets=()):
        self.name = name
        self.argv = argv  # full argument list (the output, if any, is inside)
        self.rc = rc
        self.messages = messages  # texts that must appear, each exactly once, in stderr
        self.out = out  # output file path to watch (None: the default out.h5 in the work dir)
        self.max_seconds = max_seconds
        self.datasets = datasets  # dataset names that must appear in the error message


def make_inputs(d):
    """Valid and invalid datasets (sizes: 9 index rows = 3 per rank at 3 ranks)."""
    f32, i32 = np.float32, np.int32
    r = np.random.default_rng(7)
    good = os.path.join(d, "in.h5")
    arrays = {
        "/params": r.standard_normal((10, 3)).astype(f32),
        "/gidx_ok": np.array([[0], [9], [3], [3]], i32),
        # Bad on two ranks (rows 1 and 7): scatter and gather report the LAST bad row.
        "/gidx_bad": np.array([[0], [12], [2], [3], [4], [5], [6], [10], [9]], np.int64),
        # Bad on the middle rank only (row 4).
        "/gidx_one": np.array([[0], [1], [2], [3], [-1], [5], [6], [7], [8]], i32),
        "/gidx_deep": np.zeros((4, 3), i32),
        "/gidx_float": np.array([[0.], [1.], [2.], [3.]], f32),
        "/tensor": r.standard_normal((8, 3)).astype(f32),
        "/tensor_c64": np.zeros((8, 3), np.complex64),
        "/sidx_bad": np.array([[0], [1], [8], [3], [4], [5], [-2], [7], [1]], i32),
        "/sidx_one": np.array([[0], [1], [2], [3], [4], [5], [6], [7], [9]], np.int64),
        "/sidx_ok": np.array([[0], [1], [2], [3], [4], [5], [6], [7], [1]], i32),
        "/supd": r.standard_normal((9, 3)).astype(f32),
        "/supd_c64": np.zeros((9, 3), np.complex64),
        "/supd_f64": r.standard_normal((9, 3)),
        "/supd_short": r.standard_normal((8, 3)).astype(f32),
        "/supd_narrow": r.standard_normal((9, 2)).astype(f32),
        "/supd16": r.standard_normal((9, 16)).astype(f32),
        "/pdata": r.standard_normal((9, 2)),
        "/parts_ok": np.array([0, 1, 2, 3, 0, 1, 2, 3, 0], i32),
        "/parts_bad": np.array([0, 1, 99, 3, 0, 1, 2, -1, 0], i32),  # first bad: row 2
        "/parts_one": np.array([0, 1, 2, 3, 0, 1, 2, 3, -1], i32),  # last rank only
        "/parts_short": np.zeros((8,), i32),
        "/parts_float": np.zeros((9,), np.float64),
        "/scalar": np.float32(1.5),
        "/i0": np.array([0, 1, 2, 3], i32),
        "/i1": np.array([4, 5, 6, -1, 7], i32),  # negative at flat position 3
        "/i1_ok": np.array([4, 5, 6, 7, 8], i32),
        "/i1_2d": np.array([[4, 5, 6, 7, 8]], i32),
        "/d0": r.standard_normal((4,)),
        "/d1": r.standard_normal((5,)),
        "/d1_wide": r.standard_normal((5, 2)),
        "/d0_wide": r.standard_normal((4, 3)),
    }
    write_h5(good, arrays, mode="w")
    with h5py.File(good, "a") as f:
        f.create_dataset("/compound", data=np.zeros(4, dtype=[("a", "<i4"), ("b", "<f8")]))
        f.create_dataset("/strings", data=np.array([b"ab", b"cd", b"ef"]))
        f.create_dataset("/vlen_strings", data=["x", "yy"], dtype=h5py.string_dtype())
        f.create_dataset("/tensor_str", data=np.array([[b"t%d%d" % (i, j) for j in range(3)] for i in range(8)]))
        f.create_dataset("/supd_str", data=np.array([[b"u%d%d" % (i, j) for j in range(3)] for i in range(9)]))
        f.create_dataset("/parts_str", data=np.array([b"0"] * 9))
        f.create_dataset("/compound_str", data=np.zeros(4, dtype=[("a", "<i4"), ("s", "S4")]))
        # h5py reads a compound {i, r} of two floats as a structured array, not as complex.
        f.create_dataset("/compound_i_r", data=np.zeros(4, dtype=[("i", "<f4"), ("r", "<f4")]))
        f.create_group("/grp")
    not_h5 = os.path.join(d, "not_hdf5.h5")
    with open(not_h5, "w") as f:
        f.write("this is a text file, not HDF5\n" * 100)
    truncated = os.path.join(d, "truncated.h5")
    write_h5(truncated, {"/a": np.arange(1000, dtype=np.int64), "/b": np.arange(100000, dtype=np.float64)}, mode="w")
    size = os.path.getsize(truncated)
    with open(truncated, "r+b") as f:
        f.truncate(size // 2)
    regular = os.path.join(d, "regular_file")
    with open(regular, "w") as f:
        f.write("a file, not a directory\n")
    return good, not_h5, truncated, regular


def catalogue(d, good, not_h5, truncated, regular):
    g = lambda name: ref(good, name)
    out = os.path.join(d, "out.h5")
    o = ref(out, "/o")
    existing = os.path.join(d, "existing.h5")
    gather = lambda idx, *extra: ["gather-nd", "--params", g("/params"), "--indices", g(idx), "--out", o] + list(extra)
    scatter = lambda idx, upd, shape: ["scatter-nd", "--indices", g(idx), "--updates", g(upd), "--shape", shape,
                                       "--out", o]
    tscatter = lambda op, t, idx, upd: ["tensor-scatter-" + op, "--tensor", g(t), "--indices", g(idx),
                                        "--updates", g(upd), "--out", o]
    partition = lambda data, parts, n: ["dynamic-partition", "--data", g(data), "--partitions", g(parts),
                                        "--num-partitions", str(n), "--out", o]
    stitch = lambda idx, data: ["dynamic-stitch", "--indices"] + [g(i) for i in idx] + ["--data"] + \
        [g(x) for x in data] + ["--out", o]
    # An existing output file whose names are links: into an input file, within itself, dangling.
    linked = os.path.join(d, "linked.h5")
    with h5py.File(linked, "w") as f:
        f["real"] = np.zeros((4, 3), np.float32)
        f.create_group("grp")
        f["ext"] = h5py.ExternalLink(os.path.basename(good), "/params")
        f["soft"] = h5py.SoftLink("/real")
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["dangling_deep"] = h5py.SoftLink("/nowhere/x")  # HDF5 failed on it (exit 3) rather than say no
        f["through_dataset"] = h5py.SoftLink("/real/x")
        f["grp_soft"] = h5py.SoftLink("/grp")
        f["ext_missing"] = h5py.ExternalLink("missing.h5", "/x")
        # Links to files that are there but cannot be read (HDF5 says only that they lead
        # nowhere; a pipe would be read without end).
        f["to_text"] = h5py.ExternalLink(os.path.basename(not_h5), "/x")
        f["to_truncated"] = h5py.ExternalLink(os.path.basename(truncated), "/b")
        f["to_folder"] = h5py.ExternalLink("folder.h5", "/x")
        f["to_pipe"] = h5py.ExternalLink("pipe.h5", "/x")
        f["to_symlink_loop"] = h5py.ExternalLink("symlink_loop.h5", "/x")
        f["chain"] = h5py.ExternalLink("chain.h5", "/y")
        # Loops: HDF5 said "too many links" (exit 3, as for a damaged file) or "leads to nothing".
        f["cyc1"] = h5py.SoftLink("/cyc2")
        f["cyc2"] = h5py.SoftLink("/cyc1")
        f["ext_loop"] = h5py.ExternalLink(os.path.basename(linked), "/ext_loop")
        # Elements that are arrays (H5T_ARRAY; h5py's high level turns such a dtype into dimensions).
        h5py.h5d.create(f.id, b"arr", h5py.h5t.array_create(h5py.h5t.NATIVE_FLOAT, (2,)), h5py.h5s.create_simple((3,)))
        f["br[0:2]"] = np.arange(4)
    os.makedirs(os.path.join(d, "folder.h5"), exist_ok=True)
    if not os.path.exists(os.path.join(d, "pipe.h5")):
        os.mkfifo(os.path.join(d, "pipe.h5"))
    if not os.path.lexists(os.path.join(d, "symlink_loop.h5")):
        os.symlink("symlink_loop.h5", os.path.join(d, "symlink_loop.h5"))
    with h5py.File(os.path.join(d, "chain.h5"), "w") as f:
        f["y"] = h5py.ExternalLink(os.path.basename(not_h5), "/x")
    # Files an input reaches only through a link, a virtual dataset or its raw data (h5py's
    # external=): a report naming one replaced the input with JSON (exit 0).
    lonely, raw = os.path.join(d, "lonely.h5"), os.path.join(d, "raw.bin")
    with h5py.File(good, "r") as f:
        params = f["params"][()]
    with h5py.File(lonely, "w") as f:
        f["x"] = params
    params.tofile(raw)
    reached = os.path.join(d, "reached.h5")
    with h5py.File(reached, "w") as f:
        f["link"] = h5py.ExternalLink(os.path.basename(lonely), "/x")
        layout = h5py.VirtualLayout(params.shape, params.dtype)
        layout[:] = h5py.VirtualSource(lonely, "x", shape=params.shape)
        f.create_virtual_dataset("virtual", layout)
        f.create_dataset("raw", params.shape, params.dtype, external=[(raw, 0, params.nbytes)])
        # Virtual datasets that lead back to themselves: HDF5 recursed until the stack ran out
        # (SIGSEGV on every rank), or read fill values through another file.
        own = h5py.VirtualLayout(params.shape, params.dtype)
        own[:] = h5py.VirtualSource(".", "self", shape=params.shape)
        f.create_virtual_dataset("self", own, fillvalue=-1)
        for name, other in (("ping", "pong"), ("pong", "ping")):
            pair = h5py.VirtualLayout(params.shape, params.dtype)
            pair[:] = h5py.VirtualSource(".", other, shape=params.shape)
            f.create_virtual_dataset(name, pair, fillvalue=-1)
    away = os.path.join(d, "away.h5")
    for here, there in ((reached, away), (away, reached)):
        with h5py.File(here, "a") as f:
            across = h5py.VirtualLayout(params.shape, params.dtype)
            across[:] = h5py.VirtualSource(os.path.basename(there), "across", shape=params.shape)
            f.create_virtual_dataset("across", across, fillvalue=-1)
    reached_by = lambda path, report: ["gather-nd", "--params", ref(reached, path), "--indices", g("/gidx_ok"),
                                       "--out", o, "--report", report]
    loop = "a loop of virtual datasets"
    deep = os.path.join(d, "deep.h5")
    with h5py.File(deep, "w") as f:
        f["p"] = np.ones((1,) * 32, np.float32)  # a scalar index stitches it into 33 dimensions
        f["s"] = np.int32(0)
    via = lambda path: ["gather-nd", "--params", g("/params"), "--indices", g("/gidx_ok"), "--out", ref(linked, path),
                        "--overwrite"]
    through = lambda path: ["gather-nd", "--params", ref(linked, path), "--indices", g("/gidx_ok"), "--out", o]
    C = BadCase
    return [
        C("output_of_33_dimensions", ["dynamic-stitch", "--indices", ref(deep, "/s"), "--data", ref(deep, "/p"),
                                      "--out", o], 2, ["33 dimensions, more than the 32 an HDF5 dataset can have"]),
        C("report_is_an_external_link_target", reached_by("/link", lonely), 2, ["is a file this job reads"]),
        C("report_is_a_virtual_source", reached_by("/virtual", lonely), 2, ["is a file this job reads"]),
        C("report_is_raw_data", reached_by("/raw", raw), 2, ["is a file this job reads"]),
        C("virtual_dataset_of_itself", reached_by("/self", os.path.join(d, "r.json"))[:-2], 2, [loop]),
        C("virtual_datasets_of_each_other", reached_by("/ping", os.path.join(d, "r.json"))[:-2], 2, [loop]),
        C("virtual_datasets_across_files", reached_by("/across", os.path.join(d, "r.json"))[:-2], 2, [loop]),
        C("input_through_link_to_a_non_hdf5_file", through("/to_text"), 3,
          ["(through the external link '/to_text' in", "not_hdf5.h5' is not an HDF5 file"]),
        C("input_through_link_to_a_truncated_file", through("/to_truncated"), 3,
          ["(through the external link '/to_truncated' in", "as HDF5 (truncated or damaged?)"]),
        C("input_through_link_to_a_folder", through("/to_folder"), 3, ["folder.h5' is not a regular file"]),
        C("input_through_link_to_a_pipe", through("/to_pipe"), 3, ["pipe.h5' is not a regular file"],
          max_seconds=30),
        # A link to a name that is a loop of symbolic links: a bad name (exit 2), as given directly.
        C("input_through_link_to_a_symlink_loop", through("/to_symlink_loop"), 2,
          ["(through the external link '/to_symlink_loop' in", "symlink_loop.h5' is a loop of symbolic links"]),
        C("input_through_a_chain_of_links", through("/chain"), 3,
          ["(through the external link '/y' in", "not_hdf5.h5' is not an HDF5 file"]),
        C("input_of_array_elements", through("/arr"), 2,
          ["unsupported HDF5 type class H5T_ARRAY (each element an array; store it as extra dimensions"]),
        C("dataset_name_ending_in_brackets", through("/br[0:2]"), 2,
          ["no such dataset in", "('[0:2]' at the end of the name is read as a row selection of '/br'"]),
        C("input_through_a_loop_of_soft_links", through("/cyc1"), 2,
          ["'/cyc1' leads through more links than HDF5 follows (16): a loop of soft or external links"]),
        C("input_through_a_loop_of_external_links", through("/ext_loop"), 2,
          ["'/ext_loop' in", "leads through more links than HDF5 follows (16)"]),
        # Never written through a soft or external link, nor in a link's place.
        C("output_through_external_link", via("/ext"), 2, ["is an external link to 'in.h5:/params'"], out=linked),
        C("output_below_external_link", via("/ext/new"), 2, ["is an external link to 'in.h5:/params'"], out=linked),
        C("output_in_soft_link_place", via("/soft"), 2, ["'/soft' in", "is a soft link to '/real'"], out=linked),
        C("output_in_dangling_link_place", via("/dangling"), 2, ["is a soft link to '/nowhere'"], out=linked),
        C("output_through_soft_linked_group", via("/grp_soft/new"), 2, ["is a soft link to '/grp'"], out=linked),
        # An input named through a link that leads nowhere: the link is named.
        C("input_through_dangling_soft_link", ["gather-nd", "--params", ref(linked, "/dangling"), "--indices",
                                               g("/gidx_ok"), "--out", o], 2,
          ["no such dataset: '/dangling' in", "is a soft link to '/nowhere', which leads to nothing"]),
        C("input_through_soft_link_dangling_deep",
          ["gather-nd", "--params", ref(linked, "/dangling_deep"), "--indices", g("/gidx_ok"), "--out", o], 2,
          ["no such dataset: '/dangling_deep' in", "is a soft link to '/nowhere/x', which leads to nothing"]),
        C("input_through_soft_link_through_dataset",
          ["gather-nd", "--params", ref(linked, "/through_dataset"), "--indices", g("/gidx_ok"), "--out", o], 2,
          ["no such dataset: '/through_dataset' in", "is a soft link to '/real/x', which leads to nothing"]),
        C("input_through_external_link_to_missing_file", ["gather-nd", "--params", ref(linked, "/ext_missing"),
                                                          "--indices", g("/gidx_ok"), "--out", o], 2,
          ["is an external link to 'missing.h5:/x', which leads to nothing"]),
        # Indices out of range or negative (TF's texts; scatter/gather report the last bad row).
        C("gather_nd_out_of_range_two_ranks", gather("/gidx_bad"), 2,
          ["indices[7] = [10] does not index into param shape [10,3]"], datasets=[g("/gidx_bad")]),
        C("gather_nd_negative_one_rank", gather("/gidx_one"), 2,
          ["indices[4] = [-1] does not index into param shape [10,3]"], datasets=[g("/gidx_one")]),
        C("scatter_nd_bad_two_ranks", scatter("/sidx_bad", "/supd", "8,3"), 2,
          ["indices[6] = [-2] does not index into shape [8,3]"], datasets=[g("/sidx_bad")]),
        C("scatter_nd_out_of_range_last_rank", scatter("/sidx_one", "/supd", "8,3"), 2,
          ["indices[8] = [9] does not index into shape [8,3]"], datasets=[g("/sidx_one")]),
        C("tensor_scatter_update_bad", tscatter("update", "/tensor", "/sidx_bad", "/supd"), 2,
          ["indices[6] = [-2] does not index into shape [8,3]"], datasets=[g("/sidx_bad")]),
        C("tensor_scatter_max_bad_last_rank", tscatter("max", "/tensor", "/sidx_one", "/supd"), 2,
          ["indices[8] = [9] does not index into shape [8,3]"], datasets=[g("/sidx_one")]),
        C("dynamic_partition_out_of_range", partition("/pdata", "/parts_bad", 4), 2,
          ["partitions[2] = 99 is not in [0, 4)"], datasets=[g("/parts_bad")]),
        C("dynamic_partition_negative_last_rank", partition("/pdata", "/parts_one", 4), 2,
          ["partitions[8] = -1 is not in [0, 4)"], datasets=[g("/parts_one")]),
        C("dynamic_stitch_negative_index", stitch(["/i0", "/i1"], ["/d0", "/d1"]), 2,
          ["indices[3] is out of range"], datasets=[g("/i1")]),
        C("parallel_dynamic_stitch_negative_index",
          ["parallel-dynamic-stitch"] + stitch(["/i0", "/i1"], ["/d0", "/d1"])[1:], 2,
          ["indices[3] is out of range"], datasets=[g("/i1")]),
        # Shapes.
        C("dynamic_partition_shape_mismatch", partition("/pdata", "/parts_short", 4), 2,
          ["data.shape must start with partitions.shape, got data.shape = [9,2], partitions.shape = [8]"],
          datasets=[g("/pdata"), g("/parts_short")]),
        C("dynamic_stitch_data_shape", stitch(["/i0", "/i1_2d"], ["/d0", "/d1"]), 2,
          ["data[1].shape = [5] does not start with indices[1].shape = [1,5]"], datasets=[g("/d1"), g("/i1_2d")]),
        C("dynamic_stitch_inner_shapes", stitch(["/i0", "/i1_ok"], ["/d0_wide", "/d1_wide"]), 2,
          ["Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [4,3], data[1].shape = [5,2], "
           "indices[0].shape = [4], indices[1].shape = [5]"]),
        C("scatter_nd_updates_rows", scatter("/sidx_ok", "/supd_short", "8,3"), 2,
          ["Dimensions [0,1) of indices[shape=[9,1]] must match dimensions [0,1) of updates[shape=[8,3]]"],
          datasets=[g("/sidx_ok"), g("/supd_short")]),
        C("tensor_scatter_updates_inner", tscatter("add", "/tensor", "/sidx_ok", "/supd_narrow"), 2,
          ["The inner 1 dimensions of output.shape=[8,3] must match the inner 1 dimensions of updates.shape=[9,2]"],
          datasets=[g("/tensor"), g("/supd_narrow")]),
        C("gather_nd_depth_exceeds_rank", gather("/gidx_deep"), 2,
          ["index innermost dimension length must be <= params rank; saw: 3 vs. 2"], datasets=[g("/gidx_deep")]),
        C("gather_nd_scalar_params", ["gather-nd", "--params", g("/scalar"), "--indices", g("/gidx_ok"), "--out", o],
          2, ["params must be at least a vector"]),
        C("scatter_nd_empty_output_shape", scatter("/sidx_ok", "/supd", "0,3"), 2,
          ["Indices and updates specified for empty output"]),
        # Dtypes.
        C("gather_nd_float_indices", gather("/gidx_float"), 2, ["float32"], datasets=[g("/gidx_float")]),
        C("dynamic_partition_float_partitions", partition("/pdata", "/parts_float", 4), 2, ["float64"],
          datasets=[g("/parts_float")]),
        C("tensor_scatter_updates_dtype", tscatter("update", "/tensor", "/sidx_ok", "/supd_f64"), 2,
          ["float64"], datasets=[g("/supd_f64")]),
        C("tensor_scatter_min_complex", tscatter("min", "/tensor_c64", "/sidx_ok", "/supd_c64"), 2,
          ["complex64"], datasets=[g("/tensor_c64")]),
        # Files and datasets.
        C("missing_file", ["gather-nd", "--params", ref(os.path.join(d, "no_such_file.h5"), "/params"),
                           "--indices", g("/gidx_ok"), "--out", o], 2, [os.path.join(d, "no_such_file.h5")]),
        C("missing_dataset", gather("/no_such_dataset"), 2, [g("/no_such_dataset")]),
        C("group_not_dataset", gather("/grp"), 2, [g("/grp")]),
        C("not_hdf5", ["gather-nd", "--params", ref(not_h5, "/params"), "--indices", g("/gidx_ok"), "--out", o], 3,
          [not_h5]),
        C("truncated_hdf5", ["gather-nd", "--params", ref(truncated, "/b"), "--indices", g("/gidx_ok"), "--out", o],
          3, [truncated]),
        C("compound_dataset", gather("/compound"), 2, [g("/compound")]),
        C("compound_i_then_r", gather("/compound_i_r"), 2, [g("/compound_i_r"), "compound {i, r}"]),
        # Strings: TF has no TensorScatterAdd for them; they are no index or partition ids;
        # a string inside a compound is not a string tensor.
        C("tensor_scatter_add_strings", tscatter("add", "/tensor_str", "/sidx_ok", "/supd_str"), 2,
          ["Could not find device for node: {{node TensorScatterAdd}}"]),
        C("tensor_scatter_update_string_updates", tscatter("update", "/tensor", "/sidx_ok", "/supd_str"), 2,
          ["expected to be a float tensor but is a string tensor"], datasets=[g("/supd_str")]),
        C("string_partitions", partition("/vlen_strings", "/parts_str", 2), 2, ["int32", "string"],
          datasets=[g("/parts_str")]),
        C("string_in_compound", gather("/compound_str"), 2, [g("/compound_str")]),
        C("malformed_dataset_name", ["gather-nd", "--params", good, "--indices", g("/gidx_ok"), "--out", o], 2,
          [good]),
        # Outputs.
        C("existing_output_no_overwrite", ["gather-nd", "--params", g("/params"), "--indices", g("/gidx_ok"),
                                           "--out", ref(existing, "/o")], 2, ["--overwrite", ref(existing, "/o")],
          out=existing),
        C("output_parent_is_a_file", ["gather-nd", "--params", g("/params"), "--indices", g("/gidx_ok"),
                                      "--out", ref(os.path.join(regular, "out.h5"), "/o")], 3,
          [os.path.join(regular, "out.h5")], out=os.path.join(regular, "out.h5")),
        # Attributes and the command line.
        C("num_partitions_zero", partition("/pdata", "/parts_ok", 0), 2,
          ["Value for attr 'num_partitions' of 0 must be at least minimum 1"]),
        C("num_partitions_negative", ["dynamic-partition", "--data", g("/pdata"), "--partitions", g("/parts_ok"), "--num-partitions=-3",
           "--out", o], 2, ["must be at least minimum 1"]),
        C("num_partitions_not_a_number", partition("/pdata", "/parts_ok", "four"), 2, ["--num-partitions"]),
        C("num_partitions_over_int32", partition("/pdata", "/parts_ok", 3000000000), 2, ["3000000000"]),
        C("shape_not_integer", scatter("/sidx_ok", "/supd", "4,x"), 2, ["'x' is not an integer"]),
        # An empty --shape is a scalar output shape: TensorFlow's message for these inputs.
        C("shape_empty", scatter("/sidx_ok", "/supd", ""), 2, ["Indices and updates specified for empty output shape"]),
        C("shape_negative", scatter("/sidx_ok", "/supd", "8,3")[:-4] + ["--shape=-1,2", "--out", o], 2, ["-1"]),
        # Checked before allocating: must fail fast (the updates fit the shape, so only the size is wrong).
        C("shape_overflows_int64", scatter("/sidx_ok", "/supd", "100000000000,100000000000,3"), 2,
          ["[100000000000,100000000000,3]"], max_seconds=20),
        # 128 TB of output from a few updates: made as it is written (no memory holds it), so
        # it is the disk that cannot hold it, said before anything is written. int64 indices:
        # int32 ones index no more than 2^31 - 1 rows (TF's "params_shape[0] too large").
        C("shape_exceeds_the_disk", scatter("/sidx_one", "/supd16", "2000000000000,16"), 3,
          ["no space left on the device: the dataset needs 128000000000000 bytes"], max_seconds=20),
        C("unknown_option", gather("/gidx_ok", "--bogus-option"), 2, ["--bogus-option"]),
        # Kokkos' own arguments: a misspelled one would be ignored, a number it cannot read
        # aborted the process (SIGABRT in Kokkos::initialize).
        C("kokkos_argument_misspelled", gather("/gidx_ok", "--kokkos-device=0"), 2,
          ["'--kokkos-device=0' is not an argument of this build's Kokkos", "--kokkos-device-id"]),
        C("kokkos_number_not_a_number", gather("/gidx_ok", "--kokkos-device-id=abc"), 2,
          ["--kokkos-device-id takes a whole number from 0 to 999999999: --kokkos-device-id=N"]),
        C("kokkos_number_too_large", gather("/gidx_ok", "--kokkos-device-id=99999999999999"), 2,
          ["--kokkos-device-id takes a whole number from 0 to 999999999"]),
        C("kokkos_flag_given_a_value", gather("/gidx_ok", "--kokkos-help=yes"), 2, ["--kokkos-help takes no value"]),
        C("missing_required_option", ["gather-nd", "--params", g("/params"), "--out", o], 2, ["--indices"]),
        C("stitch_count_mismatch", ["dynamic-stitch", "--indices", g("/i0"), g("/i1"), "--data", g("/d0"),
                                    "--out", o], 2,
          ["--indices (2 datasets) and --data", "(1 dataset) must name as many datasets"]),
        C("no_command", [], 2, ["no command given"]),
        C("unknown_command", ["scatter-everything", "--out", o], 2, ["unknown command 'scatter-everything'"]),
        # An op that is not in the op registry, spelled like one that is: refused, naming the ones there are.
        C("unknown_tensor_scatter_command", tscatter("mul", "/tensor", "/sidx_one", "/supd"), 2,
          ["unknown command 'tensor-scatter-mul'", "tensor-scatter-max"]),
        C("bad_indices_policy_value", gather("/gidx_ok", "--bad-indices", "skip"), 2, ["--bad-indices"]),
        C("num_partitions_beyond_int64", partition("/pdata", "/parts_ok", "99999999999999999999"), 2,
          ["--num-partitions: '99999999999999999999' does not fit"]),
        # TF's bound, the same on any machine (the memory's bound came first and said so).
        C("num_partitions_beyond_int32", partition("/pdata", "/parts_ok", "2147483648"), 2,
          ["Value for attr 'num_partitions' of 2147483648 does not fit in int32"]),
        # A switch given a value: exit 2 naming it (CLI11 read it as a count: exit 1, "stoll").
        C("quiet_given_a_value", gather("/gidx_ok", "--quiet=banana"), 2, ["--quiet takes no value"]),
        C("verbose_given_a_value", gather("/gidx_ok", "--verbose=0"), 2, ["--verbose takes no value"]),
        # A control character in a name the user gave stays on the error's one line, escaped.
        C("dataset_name_with_a_newline", gather("/gidx\nok"), 2, ["/gidx\\nok: no such dataset"]),
        C("row_bound_beyond_int64", ["gather-nd", "--params", g("/params") + "[99999999999999999999:]", "--indices",
                                     g("/gidx_ok"), "--out", o], 2,
          ["the bound 99999999999999999999 lies beyond the 64-bit integers"]),
        C("row_bound_not_an_integer", ["gather-nd", "--params", g("/params") + "[1.5:]", "--indices",
                                       g("/gidx_ok"), "--out", o], 2, ["'[1.5:]': the bounds must be integers"]),
        C("chunk_rows_zero", gather("/gidx_ok", "--chunk-rows", "0"), 2,
          ["--chunk-rows: expected a whole number of at least 1, got '0'"]),
        C("chunk_rows_beyond_int64", gather("/gidx_ok", "--chunk-rows", "99999999999999999999"), 2,
          ["--chunk-rows: '99999999999999999999' does not fit a 64-bit integer"]),
    ]


def run_bad_case(suite, sh, case, d):
    out = case.out or os.path.join(d, "out.h5")
    out_dir = os.path.dirname(out)
    before, listing = file_state(out), dir_listing(out_dir)
    t0 = time.monotonic()
    res = sh.run(case.argv)
    seconds = time.monotonic() - t0
    suite.require(not res.timed_out, "hung: killed after %.0f s" % sh.timeout, res)
    suite.check(res.rc == case.rc, "exit code %s, expected %d" % (res.rc, case.rc), res)
    lines = error_lines(res.stderr)
    suite.check(len(lines) == 1, "expected exactly one 'shardops: error' line on stderr, got %d" % len(lines), res)
    for text in list(case.messages) + list(case.datasets):
        n = res.stderr.count(text)
        suite.check(n >= 1, "stderr lacks %r" % text, res)
        suite.check(n <= 1 or len(lines) != 1 or lines[0].count(text) == n,
                    "%r printed %d times (once expected: rank 0 only)" % (text, n), res)
    suite.check("internal error" not in res.stderr, "reported as an internal error", res)
    # mpirun sends SIGTERM to the ranks still finishing once one exits with the error: they
    # end quietly with the job's code, not as a stopped job.
    suite.check("stopped by" not in res.stderr, "a rank reported a stop signal after the error", res)
    if suite.args.verbose:
        print("    " + (lines[0] if lines else "(no error line)"))
    suite.check(file_state(out) == before, "the output path %s changed (%s -> %s)" % (
        out, "absent" if before is None else "%d bytes" % len(before),
        "absent" if file_state(out) is None else "%d bytes" % len(file_state(out))), res)
    suite.check(dir_listing(out_dir) == listing, "the output directory changed: %s -> %s"
                % (listing, dir_listing(out_dir)), res)
    if case.max_seconds:
        suite.check(seconds < case.max_seconds, "took %.1f s, expected to fail fast (< %d s)"
                    % (seconds, case.max_seconds), res)


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=3)
    suite = Suite("e2e_bad_inputs_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "bad") as d:
        good, not_h5, truncated, regular = make_inputs(d)
        existing = os.path.join(d, "existing.h5")
        write_h5(existing, {"/o": np.arange(5, dtype=np.int16), "/other": np.ones(3)}, mode="w")
        inputs_before = {p: file_state(p) for p in (good, not_h5, truncated)}
        cases = catalogue(d, good, not_h5, truncated, regular)
        names = [c.name for c in cases]
        assert len(set(names)) == len(names), "duplicate case names"
        for case in cases:
            suite.case(case.name, run_bad_case, suite, sh, case, d)
        suite.case("inputs_never_modified", lambda: [
            suite.check(file_state(p) == b, "input file %s was modified" % p) for p, b in inputs_before.items()])
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
