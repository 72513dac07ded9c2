# env.sh: source (bash) after setup-on-device.sh has unpacked the bundle and run select-libs.sh.
# Makes the bundled Open MPI 4.1.4 (Debian), PMIx and parallel HDF5 usable from any prefix.
G=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SHARDOPS_GPU_BUNDLE=$G
# The environment before the bundle, for tools that should not see its libraries (peer-python).
if [[ -z ${SHARDOPS_ORIG_SET-} ]]; then
  export SHARDOPS_ORIG_SET=1 SHARDOPS_ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH-} SHARDOPS_ORIG_PATH=$PATH
  export SHARDOPS_PEER_PYTHON=${SHARDOPS_PEER_PYTHON:-$(command -v python3 || echo python3)}
fi
export LD_LIBRARY_PATH=$G/lib${SHARDOPS_ORIG_LD_LIBRARY_PATH:+:$SHARDOPS_ORIG_LD_LIBRARY_PATH}
export PATH=$G/bin:$G/ompi/usr/bin:$SHARDOPS_ORIG_PATH
# Open MPI relocation. Debian configured --libdir=${prefix}/lib/x86_64-linux-gnu/openmpi/lib and
# an absolute --sysconfdir=/etc/openmpi, so OPAL_PREFIX moves bindir/libdir/pkglibdir/pkgdatadir
# but not sysconfdir: that one needs OPAL_SYSCONFDIR.
export OPAL_PREFIX=$G/ompi/usr
export OPAL_SYSCONFDIR=$G/ompi/etc/openmpi
# PMIx (external, Debian prefix /usr/lib/x86_64-linux-gnu/pmix2); its conf file names an
# absolute component path, which the environment overrides.
export PMIX_INSTALL_PREFIX=$G/ompi/usr/lib/x86_64-linux-gnu/pmix2
export PMIX_MCA_mca_base_component_path=$PMIX_INSTALL_PREFIX/lib/pmix
# One node, as root, shared memory only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_plm=${OMPI_MCA_plm:-isolated}             # local launch only: no ssh/rsh needed
export OMPI_MCA_rmaps_base_oversubscribe=1
# No binding: ctest -j runs several mpiexec at once, and each would bind its ranks to cores 0, 1, ...
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
# CMA (process_vm_readv) is often refused in containers/sandboxes: copy through shared memory.
[[ -n ${OMPI_MCA_btl_vader_single_copy_mechanism-} ]] && export SHARDOPS_SINGLE_COPY_CHOSEN=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# A container's /dev/shm may be tiny (64 MiB): setup-on-device.sh sets
# OMPI_MCA_btl_vader_backing_directory=/tmp when it is under 1 GiB.
export OMPI_MCA_mca_base_component_show_load_errors=${OMPI_MCA_mca_base_component_show_load_errors:-0}
