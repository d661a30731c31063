! SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
!
! mpi_ftn: ground truth in Fortran. ALLOCATE in the main program and in a
! subroutine: the arrays belong to the program (`app`), never to MPI or
! libgfortran.
!
!   mpi_ftn LOG_DIR GO_FILE UNIT_MIB PLATEAU_MS
!
! Rank R, U = (R+1)*UNIT_MIB MiB. After MPI_Init and 100 MPI_Allreduce each
! rank logs "ready" and waits for GO_FILE. Then, each step followed by a
! plateau: two ALLOCATEs of U in the main program, each followed by a
! barrier; two more of U in a subroutine; everything DEALLOCATEd. Event log
! DIR/ftn-rank-R.csv and DIR/expect-rank-R.csv (ftn_log.c), for
! check_truth.py --prefix ftn.
module ftn_truth
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
    subroutine ftn_expect(plateau, first, last, app_bytes) bind(C)
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
  subroutine chatter(n)
    include 'mpif.h'
    integer, intent(in) :: n
    integer :: i, ierr
    real(8) :: x, y
    x = 1.0d0
    do i = 1, n
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
  end subroutine

  ! Arrays the program allocates in a subroutine of its own.
  subroutine sub_alloc(n)
    include 'mpif.h'
    integer(8), intent(in) :: n
    integer :: ierr
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call chatter(20)
    allocate(s1(n))
    s1 = 2.0d0
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call chatter(20)
    allocate(s2(n))
    s2 = 3.0d0
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine
end module

program mpi_ftn
  use ftn_truth
  implicit none
  include 'mpif.h'
  character(len=4096) :: log_dir, go_file, arg
  integer :: ierr, rank
  integer(8) :: unit_mib, plateau_ms, n, unit, held
  real(8), allocatable :: a1(:), a2(:)

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
  held = 0

  call chatter(100)
  call ftn_log_open(trim(log_dir)//c_null_char, int(rank, c_int))
  call ftn_log_event("ready"//c_null_char, 0_8)
  call ftn_wait_go(trim(go_file)//c_null_char, int(rank, c_int))
  call ftn_log_event("start"//c_null_char, 0_8)

  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("main_begin"//c_null_char, 0_8)
  call ftn_expect("baseline"//c_null_char, "start"//c_null_char, "main_begin"//c_null_char, 0_8)
  call chatter(20)
  allocate(a1(n))
  a1 = 1.0d0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call chatter(20)
  allocate(a2(n))
  a2 = 1.5d0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  held = held + 2 * unit
  call ftn_log_event("main_done"//c_null_char, held)

  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("sub_begin"//c_null_char, 0_8)
  call ftn_expect("main"//c_null_char, "main_done"//c_null_char, "sub_begin"//c_null_char, held)
  call sub_alloc(n)
  held = held + 2 * unit
  call ftn_log_event("sub_done"//c_null_char, held)

  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("free_begin"//c_null_char, 0_8)
  call ftn_expect("sub"//c_null_char, "sub_done"//c_null_char, "free_begin"//c_null_char, held)
  if (a1(n) /= 1.0d0 .or. a2(1) /= 1.5d0 .or. s1(n) /= 2.0d0 .or. s2(1) /= 3.0d0) then
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  deallocate(a1, a2, s1, s2)
  held = 0
  call ftn_log_event("free_done"//c_null_char, 0_8)

  call ftn_sleep_ms(plateau_ms)
  call ftn_log_event("end"//c_null_char, 0_8)
  call ftn_expect("freed"//c_null_char, "free_done"//c_null_char, "end"//c_null_char, 0_8)
  call ftn_close()
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program
