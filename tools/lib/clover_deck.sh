# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by tools/validate/run.sh and tools/bench/daemon_cpu.sh.
# clover_deck FILE CELLS STEPS OWNER: CloverLeaf's input deck (it reads
# clover.in from its working directory): the project's own deck with a
# CELLS x CELLS mesh and STEPS steps, owned by OWNER (the job's user).
clover_deck() {
	cat >"$1" <<-EOF
		*clover
		 state 1 density=0.2 energy=1.0
		 state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
		 x_cells=$2
		 y_cells=$2
		 xmin=0.0
		 ymin=0.0
		 xmax=10.0
		 ymax=10.0
		 initial_timestep=0.04
		 timestep_rise=1.5
		 max_timestep=0.04
		 end_step=$3
		*endclover
	EOF
	chown "$4" "$1"
}
