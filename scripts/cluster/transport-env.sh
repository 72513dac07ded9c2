#!/usr/bin/env bash
# transport-env.sh ucx|ob1: prints, as NAME=VALUE words for `env`, the Open MPI transport that
# jobs on the namespace cluster in $SHARDOPS_CLUSTER_DIR get under Slurm (srun, or mpirun
# inside sbatch; sbatch passes the environment on), with MPI and launcher traffic on the
# cluster's subnet only.
#   ucx  UCX over TCP between hosts, shared memory inside one: what srun jobs use here. Open
#        MPI 4.1 starts its UCX pml on TCP alone only when pml_ucx_tls and pml_ucx_devices say
#        `any`; eth0 is the interface netns-cluster.sh gives every host.
#   ob1  ob1 with the TCP and shared-memory BTLs. Under srun --mpi=pmix it crashes rank 0 in
#        MPI_Init now and then (docs/clusters.md, "srun and TCP"; srun-init-check.sh counts it).
set -euo pipefail
DIR=${SHARDOPS_CLUSTER_DIR:?set SHARDOPS_CLUSTER_DIR to the directory given to netns-cluster.sh up}
subnet=$(awk 'NR == 1 {sub(/\.[0-9]+$/, "", $3); print $3 ".0/24"}' "$DIR/hosts")
common="OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=$subnet OMPI_MCA_oob_tcp_if_include=$subnet"
case ${1:-} in
  ucx) echo "OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any UCX_TLS=tcp,sm,self UCX_NET_DEVICES=eth0 $common" ;;
  ob1) echo "OMPI_MCA_pml=ob1 $common" ;;
  *)
    echo "usage: $0 ucx|ob1" >&2
    exit 1
    ;;
esac
