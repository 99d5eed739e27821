//===- mpi_process.h - MPI under every backend ------------------*- C++ -*-===//
//
// Both backends start on MPI: it launches the ranks, and carries the cpu
// backend's tensors or the cuda backend's out-of-band traffic (the NCCL
// unique id, splits, host barriers). Start-up, shut-down and MPI error
// texts are the same for both and live here; parc_rt_abort is defined in
// mpi_process.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_MPI_PROCESS_H
#define PARC_RUNTIME_MPI_PROCESS_H

#include "liveness.h"
#include "status.h"

// Only the C API: the deprecated MPI C++ bindings would add a link
// dependency on libmpi_cxx to every generated program.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace parc::rt {

/// "<what>: MPI error: <MPI's text for code>".
parc_rt_status_t mpiFail(parc_rt_status_t status, int code, const char *what);

/// MPI_Init_thread (FUNNELED) unless the host program did (`ownsMpi` says
/// which), then `world`: a private duplicate of MPI_COMM_WORLD that keeps
/// runtime traffic apart from the host's, with errors returned rather than
/// fatal. Fails if MPI was already finalized.
parc_rt_status_t startMpi(int *argc, char ***argv, bool &ownsMpi,
                          MPI_Comm &world);

/// Starts the heartbeat (liveness.h) once, at start-up: rank 0 serves, the
/// others join it at the address rank 0 broadcasts over `world`, with rank
/// 0's PARC_RT_LIVENESS_S. If any rank cannot, it warns and no rank
/// watches; the job still runs.
parc_rt_status_t startLiveness(MPI_Comm world, Liveness &out);

/// MPI_Finalize when startMpi initialised MPI.
parc_rt_status_t finishMpi(bool ownsMpi);

} // namespace parc::rt

#endif // PARC_RUNTIME_MPI_PROCESS_H
