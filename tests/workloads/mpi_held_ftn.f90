! SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
!
! mpi_held_ftn: mpi_held in Fortran -- arrays ALLOCATEd before the tool
! attaches (issue 31), whose owner is inferred from who holds them.
!
!   mpi_held_ftn LOG_DIR GO_FILE UNIT_MIB PLATEAU_MS
!
! Rank R, U = (R+1)*UNIT_MIB MiB, all allocated after MPI_Init and before
! "ready": two arrays of U in the main program, two of U in a subroutine
! (module arrays, SAVEd: their descriptors are the program's statics).
! The main program's arrays are SAVE: gfortran keeps the descriptors of
! unsaved ones of the main program in registers only, and a register of a
! thread waiting in a syscall cannot be read without stopping it (docs/attribution.md,
! "Attaching to a running job": what the inference can get wrong).
! Plateaus "held" (4U) and "released" (one of each DEALLOCATEd: 2U),
! absolute truths for check_truth.py --absolute --prefix ftn.
module held_arrays
  use iso_c_binding
  implicit none
  interface
    subroutine ftn_log_open(dir, rank) bind(C)
      import :: c_char, c_int
      character(kind=c_char), dimension(*) :: dir
      integer(c_int), value :: rank
    end subroutine
    subroutine ftn_log_event(event, bytes) bind(C)
      import :: c_char, c_long_long
      character(kind=c_char), dimension(*) :: event
      integer(c_long_long), value :: bytes
    end subroutine
    subroutine ftn_expect_app(plateau, first, last, app_bytes) bind(C)
      import :: c_char, c_long_long
      character(kind=c_char), dimension(*) :: plateau, first, last
      integer(c_long_long), value :: app_bytes
    end subroutine
    subroutine ftn_wait_go(go_file, rank) bind(C)
      import :: c_char, c_int
      character(kind=c_char), dimension(*) :: go_file
      integer(c_int), value :: rank
    end subroutine
    subroutine ftn_sleep_ms(ms) bind(C)
      import :: c_long_long
      integer(c_long_long), value :: ms
    end subroutine
    subroutine ftn_close() bind(C)
    end subroutine
  end interface
  real(8), allocatable, save :: s1(:), s2(:)
contains
  subroutine sub_alloc(n)
    integer(8), intent(in) :: n
    allocate(s1(n))
    s1 = 2.0d0
    allocate(s2(n))
    s2 = 3.0d0
  end subroutine
end module

program mpi_held_ftn
  use held_arrays
  implicit none
  include 'mpif.h'
  character(len=4096) :: log_dir, go_file, arg
  integer :: ierr, rank
  integer(8) :: unit_mib, plateau_ms, n, unit
  real(8), allocatable, save :: a1(:), a2(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, log_dir)
  call get_command_argument(2, go_file)
  call get_command_argument(3, arg)
  read(arg, *) unit_mib
  call get_command_argument(4, arg)
  read(arg, *) plateau_ms
  unit = int(rank + 1, 8) * unit_mib * 1048576_8
  n = unit / 8

  allocate(a1(n))
  a1 = 1.0d0
  allocate(a2(n))
  a2 = 1.5d0
  call sub_alloc(n)

  call ftn_log_open(trim(log_dir)//c_null_char, int(rank, c_int))
  call ftn_log_event("ready"//c_null_char, 0_8)
  call ftn_wait_go(trim(go_file)//c_null_char, int(rank, c_int))
  call ftn_log_event("start"//c_null_char, 0_8)
  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("release_begin"//c_null_char, 0_8)
  call ftn_expect_app("held"//c_null_char, "start"//c_null_char, "release_begin"//c_null_char, &
                      4 * unit)
  deallocate(a1)
  deallocate(s1)
  call ftn_log_event("release_done"//c_null_char, 0_8)
  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("end"//c_null_char, 0_8)
  call ftn_expect_app("released"//c_null_char, "release_done"//c_null_char, "end"//c_null_char, &
                      2 * unit)
  if (a2(n) /= 1.5d0 .or. s2(n) /= 3.0d0) print *, "mpi_held_ftn: memory changed"
  call ftn_close()
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program
