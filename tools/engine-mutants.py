#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`make engine-mutants`: each mutation named in tests/unit/test_engine.c
and tests/unit/test_discovery.c makes its test fail.

Usage: engine-mutants.py [BUILD]

Each mutation is an exact edit of one file of userspace/engine/ (the text
must be found once among them all); the file is edited, test_engine rebuilt
in BUILD (default build) and run, the named test must fail (or crash), and
the file is restored, whatever happens. Not for a tree someone else is
building meanwhile.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ENGINE = sorted(glob.glob(os.path.join(ROOT, "userspace", "engine", "*.c")))

# (what, the test that must fail, old text, new text[, the test program: test_engine])
D = "test_discovery"
M=[
 ('held_records_catch_up: return at once', 'test_catch_up_reads_records_older_than_the_reads',
  '\tdouble until = tracker_now(t) + t->opt->interval_ms / 1e3 * CATCH_UP_SHARE;\n\n\twhile',
  '\tdouble until = tracker_now(t) + t->opt->interval_ms / 1e3 * CATCH_UP_SHARE;\n\n\treturn;\n\twhile'),
 ('held_records_catch_up: until the ring is empty', 'test_catch_up_reads_records_older_than_the_reads',
  ' && t->newest_record_ns < mark_ns && tracker_now(t) < until)', ' && tracker_now(t) < until + 0 * mark_ns)'),
 ('held_records_catch_up: never behind', 'test_catch_up_reads_records_older_than_the_reads',
  '\treturn tracer_backlog(&t->bpf) && t->newest_record_ns < mark_ns;\n', '\treturn false;\n'),
 ('on_event: the newest record\'s time not kept', 'test_catch_up_reads_records_older_than_the_reads',
  '\tif (h->ts_ns > t->newest_record_ns)\n\t\tt->newest_record_ns = h->ts_ns;\n', ''),
 ('sampled_count: no drain before the count of every region (main before the fix)',
  'test_sampled_count_applies_requests_made_during_read',
  '\tp->sample_mark_ns = 0;\n\theld_records_drain(t);\n', '\tp->sample_mark_ns = 0;\n\t(void)t;\n'),
 ('sampled_count: the mark of the read before the drain kept', 'test_sampled_count_applies_requests_made_during_read',
  '\tp->sample_mark_ns = 0;\n\theld_records_drain(t);\n', '\theld_records_drain(t);\n'),
 ('requests_before_count: one drain, as its budget cuts it (main before the LULESH fix)',
  'test_sampled_count_applies_every_request_before_it',
  '\theld_records_drain(t);\n\theld_records_catch_up(t, now_ns);\n', '\theld_records_drain(t);\n\t(void)now_ns;\n'),
 ('sampled_count: the count before the records of the requests made during its read (main before the fix)',
  'test_sampled_count_applies_requests_made_during_mark_read',
  '\tp = requests_before_read(t, s, p, &t0);\n\tif (!p)\n\t\tgoto done;\n', ''),
 ('sampled_count: no second count of a count the process outran', 'test_sampled_count_again_when_outrun',
  '#define COUNT_PASSES\t3\n', '#define COUNT_PASSES\t1\n'),
 ('sampled_count: none after an outrun count of every region', 'test_sampled_count_again_when_outrun',
  '\t\tcounted_all(p, before);\n\t\tcount_outran(t, s, p, before, &t0);\n', '\t\tcounted_all(p, before);\n'),
 ('count_outran: no records applied before a count again', 'test_sampled_count_again_when_outrun',
  '\t\tp = requests_before_count(t, s, p, t0);\n\t\tif (!p || reads_vmrss', '\t\t(void)t0;\n\t\tif (!p || reads_vmrss'),
 ('route: ignore h->job', 'test_fork_routed_by_job_slot',
  '\tif (h->job)\n\t\tfor (s = t->sessions; s; s = s->next)\n\t\t\tif (s->id == h->job)\n\t\t\t\treturn s;\n', ''),
 ('route: no pid lookup', 'test_fork_routed_by_parent_without_slot',
  '\tfor (s = t->sessions; s; s = s->next)\n\t\tif (session_find(s, h->tgid))\n\t\t\treturn s;\n', ''),
 ('on_event: no EV_FORK', 'test_fork_adds_child',
  '\t\tif (size >= sizeof(struct ev_task))\n\t\t\ttracker_on_fork(t, s, data);\n', '\t\t(void)tracker_on_fork;\n'),
 ('on_fork: no account', 'test_fork_of_launcher_followed_not_accounted',
  '\tp->account = !job_is_launcher(t->specs, p->comm);\n\t/* A copy of the parent', '\t/* A copy of the parent'),
 ('on_fork: no under_rank', 'test_fork_child_of_rank_is_under_rank',
  '\tp->under_rank = parent && parent->account && (parent->rank >= 0 || parent->under_rank);\n', ''),
 ('on_fork: a launcher\'s children under its rank', 'test_fork_of_rank_turned_launcher',
  'parent && parent->account && (parent->rank', 'parent && (parent->rank'),
 ('traced_flags: a launcher stays a rank', 'test_fork_of_rank_turned_launcher',
  '(p->rank >= 0 && p->account ? TRACED_RANK : 0)', '(p->rank >= 0 ? TRACED_RANK : 0)'),
 ('on_fork: no flags put right', 'test_fork_of_rank_turned_launcher',
  '\tif (!p->under_rank && (p->kernel_flags & TRACED_UNDER_RANK))\n\t\tidentity_update_kernel(t, s, p);\n', ''),
 ('on_exec: no account', 'test_exec_into_launcher',
  '\tp->account = !job_is_launcher(t->specs, p->comm);\n\tp->unidentified = true;', '\tp->unidentified = true;'),
 ('on_exec: no update_kernel_flags', 'test_exec_into_launcher',
  '\t\treturn;\n\tidentity_update_kernel(t, s, p);\n}', '\t\treturn;\n}'),
 ('identify_late: never identifies', 'test_exec_into_launcher',
  '\tif (p->under_rank)\n\t\tp->unidentified = false;\n\telse\n\t\tidentity_read(s, p);\n', ''),
 ('on_event: no untraced_exec hook', 'test_untraced_exec_goes_to_hook',
  '\t\tt->hooks->untraced_exec(t->hooks->ctx, t, h->tgid);\n', ''),
 ('on_event: no EV_EXIT', 'test_exit_retires',
  '\tif (h->type == EV_EXIT) {\n\t\tretire(t, s, p);\n\t\treturn 0;\n\t}\n', ''),
 ('on_event: no EV_OOM', 'test_oom_recorded_before_exit',
  '\tif (h->type == EV_OOM) {\n\t\tretire_oom(t, s, p, h->ts_ns);\n\t\treturn 0;\n\t}\n', ''),
 ('retire_oom: time of handling', 'test_oom_recorded_before_exit',
  'oom_fill(s, p, tracker_boot_time(t, boot_ns) - s->t0, "", &o);', '(void)boot_ns;\n\toom_fill(s, p, tracker_now(t) - s->t0, "", &o);'),
 ('retire: no kernel note of an OOM kill', 'test_oom_noted_when_gone_before_record',
  '\tif (!p->oom_marked && tracer_take_oom_mark(&t->bpf, p->pid, &boot_ns) && oom_note_of(p, boot_ns))\n\t\tretire_oom(t, s, p, boot_ns);\n',
  '\t(void)boot_ns;\n\t(void)oom_note_of;\n'),
 ('retire: an earlier process\'s note taken', 'test_oom_note_of_earlier_process_ignored',
  'return !p->start_ticks || boot_ns + tick_ns >= p->start_ticks * tick_ns;', 'return p || boot_ns || tick_ns || 1;'),
 ('retire_oom: note left', 'test_oom_note_of_earlier_process_ignored',
  '\ttracer_take_oom_mark(&t->bpf, p->pid, &note);\n', '\t(void)note;\n'),
 ('retire: no ended ring entry', 'test_records_after_exit_are_ended_not_unknown',
  '\tt->ended[t->nended++ % TRACKER_ENDED_RING] = (struct ended_proc){\n\t\t.pid = p->pid, .start_ticks = p->start_ticks, .when = tracker_now(t),\n\t\t.fork_pending = p->from_scan,\n\t};\n', ''),
 ('retire: no drop_held', 'test_exit_drops_held_unread',
  '\tretire_held(t, p);\n\tt->ended[', '\tt->ended['),
 ('hold: never', 'test_unnamed_records_held_until_drain_end',
  '\tsize_t before = p->held.len;\n\n', '\tsize_t before = p->held.len;\n\n\treturn false;\n'),
 ('hold: named held too', 'test_named_process_records_applied_at_once',
  'if (p->named || p->held.refused', 'if (p->held.refused'),
 ('release_all_held: no release', 'test_unnamed_records_held_until_drain_end',
  '\t\t\tif (p->held.count && !held_records_settling(t, p, now))\n\t\t\t\theld_records_release(t, s, p);', '\t\t\tif (p->held.count && !held_records_settling(t, p, now))\n\t\t\t\t(void)0;'),
 ('hold: no release before refusing', 'test_held_past_bound_applied_in_order',
  '\theld_records_release(t, s, p);\n\tp->held.refused = true;', '\t(void)s;\n\tp->held.refused = true;'),
 ('on_exec: no drop_held', 'test_exec_drops_old_image_held',
  '\tretire_held(t, p);\n\tproc_reset_mm(p);', '\tproc_reset_mm(p);'),
 ('on_fork: every accounted parent\'s child final at fork', 'test_fork_of_shell_named_at_exec',
  '\t\tif (p->under_rank)\n\t\t\tp->exec_seen = true;\n', '\t\tp->exec_seen = true;\n'),
 ('on_fork: a rank\'s child awaits an exec', 'test_fork_child_of_rank_is_under_rank',
  '\t\tif (p->under_rank)\n\t\t\tp->exec_seen = true;\n', ''),
 ('collect_peak: every process\'s sites, not only those that peaked', 'test_heap_peak_taken_for_peaked_only',
  '\tif (p && p->heap_peak.due)\n\t\theap_peak_add', '\tif (p)\n\t\theap_peak_add'),
 ('mode_counts_peaks: due flags left set after the walk', 'test_heap_peak_taken_for_peaked_only',
  '\t\t\tp->heap_peak.due = false;\n}', '\t\t\t(void)p;\n}'),
 ('on_fork: no inherit_held', 'test_fork_inherits_parent_requests',
  '\t\theld_records_inherit(t, s, p, parent);\n', '\t\t(void)held_records_inherit;\n'),
 ('refresh_kstats: drops not from the job\'s start', 'test_job_drops_and_sample_gaps',
  'tracer_job_drops(&t->bpf, s->id) - s->drops_base;', 'tracer_job_drops(&t->bpf, s->id);'),
 ('sampled_count: no count again when VmRSS moved across the records read after a steady read',
  'test_sampled_count_again_when_moved_during_catch_up',
  '\t\t\t\tgoto done;\n\t\t\tif (!recount_moved(before, p->sample_total)) {\n',
  '\t\t\t\tgoto done;\n\t\t\tif (1) {\n'),
 ('asked_read_due: an urgent read put off as any', 'test_urgent_read_not_put_off',
  '\treturn p->sync_urgent || !long_read(t, p) ||', '\treturn !long_read(t, p) ||'),
 ('refresh_kstats: records lost re-read in sampled mode only', 'test_exact_reads_mappings_after_lost_records',
  '\t\tif (drops > s->drops)\n', '\t\tif (drops > s->drops && t->opt->sampled)\n'),
 ('note_sample: every gap late', 'test_job_drops_and_sample_gaps',
  '\t\tif (gap > 2 * t->opt->interval_ms / 1e3)\n\t\t\ts->late_samples++;', '\t\ts->late_samples++;'),
 ('is_request: every record', 'test_fork_inherits_parent_requests',
  'return size >= sizeof(*h) && h->type == EV_SYSCALL;', 'return size >= sizeof(*h);'),
 ('match_env: a cgroup process judged by its environment too', 'test_scan_cgroup_beats_environment',
  '\t\t\tret = pid_list_add(s->out, pid);\n\t\t}\n\t\tclose(pfd);\n\t\treturn ret;\n\t}\n',
  '\t\t\tret = pid_list_add(s->out, pid);\n\t\t}\n\t}\n', D),
 ('match_env: any step of the job\'s cgroups', 'test_scan_one_step',
  'sc.job == s->job && (!s->step[0] || !strcmp(sc.step, s->step))', 'sc.job == s->job', D),
 ('env_in_job: no SLURM_STEP_ID is any step', 'test_scan_one_step',
  ': !strcmp(s->step, "batch");', ': true;', D),
 ('job_scan_env: every uid\'s claims join', 'test_scan_slurm_job',
  '\t\tif (s.claims[i].uid == owner)\n\t\t\tret = pid_list_add(out, s.claims[i].pid);',
  '\t\tret = pid_list_add(out, s.claims[i].pid);', D),
 ('job_scan_env: no -EEXIST for two uids', 'test_claims_of_two_users_are_ambiguous',
  '\tif (!ret && owner == JOB_ANY_UID && who->nclaimants > 1)\n\t\tret = -EEXIST;\n', '', D),
 ('note_cgroup_owner: root owns the job', 'test_root_in_cgroup_owns_nothing',
  '!proc_at_who(pfd, &who) && who.uid != 0', '!proc_at_who(pfd, &who)', D),
 ('note_cgroup_owner: v1 uid_<U> ignored', 'test_scan_v1_owner_from_path',
  '\tif (v1_owner != (uid_t)-1)\n', '\tif (false && v1_owner != (uid_t)-1)\n', D),
 ('job_step_of: no cgroup read', 'test_step_from_cgroup_before_environment',
  '\tif (!procfs_read_slurm_cgroup(pid, &sc)) {\n\t\tsnprintf(step, len, "%s", sc.step);\n\t\treturn;\n\t}\n',
  '\t(void)sc;\n', D),
 ('job_descendants: children only', 'test_find_launcher_and_descendants',
  '!ret && i < out->n; i++)', '!ret && i < 1; i++)', D),
 ('adopt: the kernel-followed adopted too', 'test_adopt_leaves_kernel_followed_to_their_fork',
  '\t\t\tif (tracer_has_process(&t->bpf, pid)) {', '\t\t\tif (false && tracer_has_process(&t->bpf, pid)) {'),
 ('job_descendants_of: children only', 'test_descendants_of_several_roots',
  '!ret && i < tree.n; i++)', '!ret && i < nroots; i++)', D),
 ('job_descendants_of: roots given back', 'test_descendants_of_several_roots',
  'ret = pid_list_add(&tree, roots[i]);', 'ret = pid_list_add(&tree, roots[i]) ?: pid_list_add(out, roots[i]);', D),
 ('is_live_pid: a kernel thread launches', 'test_kernel_thread_launches_nothing',
  '== 0 && !(st.flags & PROC_PF_KTHREAD);', '== 0;', D),
 ('job_rank_of: task variables always', 'test_rank_variables_in_order',
  'spec_rank_variables(specs, tasks, keys', 'spec_rank_variables(specs, tasks || true, keys', D),
 ('tracker_run: no end_session', 'test_session_ends_with_its_last_process',
  '\t\t\t\tif (!s->procs.n && (t->hooks || s != t->sessions || sn))\n\t\t\t\t\tend_session(t, s);', '\t\t\t\tif (!s->procs.n && (t->hooks || s != t->sessions || sn))\n\t\t\t\t\t(void)0;'),
 ('tracker_add_pid: no attach sample (main before the fix)', 'test_attach_sample_when_gone_before_round',
  '\t\tattach_sample(t, s, p);\n\t}\n', '\t\t(void)attach_sample;\n\t}\n'),
 ('tracker_add_pid: no attach sample, stopped before a round', 'test_attach_sample_at_finish',
  '\t\tattach_sample(t, s, p);\n\t}\n', '\t\t(void)attach_sample;\n\t}\n'),
 ('session_end_proc: no attach sample', 'test_attach_sample_when_gone_before_round',
  '\tsession_attach_sample(s, p, j);\n\t/* Its view', '\t/* Its view'),
 ('session_attach_sample: the end\'s time, not its own', 'test_attach_sample_when_gone_before_round',
  '\tat.now = since(p->attach_time, s->t0);\n', ''),
 ('mark_proc: what was set apart from the attach sample kept', 'test_attach_sample_replaced_by_round',
  '\t\tproc_drop_late(p);\n\t\tp->attach_pending = false;\n', '\t\tp->attach_pending = false;\n'),
 ('tracker_finish: no attach sample', 'test_attach_sample_at_finish',
  '\t\t\tsession_attach_sample(s, p, &j);\n', ''),
 ('account_session: the attach read\'s sample accounted in the round it came in', 'test_attach_during_round_waits',
  '\t\tif (!p->sample_mark_ns || p->attach_pending)\n', '\t\tif (!p->sample_mark_ns)\n'),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    origs = {f: open(f).read() for f in ENGINE}
    missed = 0
    try:
        for name, test, old, new, *prog in M:
            target = build + "/tests/" + (prog[0] if prog else "test_engine")	# as the Makefile names it
            test_bin = os.path.join(ROOT, target)
            found = [f for f in ENGINE if old in origs[f]]
            count = sum(origs[f].count(old) for f in found)
            if count != 1:
                print("engine-mutants: %s: the text to mutate is found %d times, not once" %
                      (name, count))
                missed += 1
                continue
            F = found[0]
            with open(F, "w") as f:
                f.write(origs[F].replace(old, new))
            r = subprocess.run(["make", "-s", "BUILD=" + build, target], cwd=ROOT,
                               capture_output=True, text=True)
            with open(F, "w") as f:
                f.write(origs[F])
            if r.returncode:
                print("engine-mutants: %s: does not build:\n%s" % (name, r.stderr[-800:]))
                missed += 1
                continue
            r = subprocess.run([test_bin], cwd=os.path.join(ROOT, "tests", "unit"),
                               capture_output=True, text=True, timeout=300)
            out = r.stdout + r.stderr
            failed = set(re.findall(r"\[  (?:FAILED|ERROR) +\] (\w+)", out))
            running = re.findall(r"\[ RUN      \] (\w+)", out)
            caught = test in failed or (r.returncode < 0 and running and running[-1] == test)
            print("engine-mutants: %-42s -> %s %s" % (name, test, "fails: caught" if caught else "PASSES: missed"))
            missed += not caught
    finally:
        for F, text in origs.items():
            if open(F).read() != text:
                with open(F, "w") as f:
                    f.write(text)
        # The objects again as the sources are.
        subprocess.run(["make", "-s", "BUILD=" + build, build + "/tests/test_engine",
                        build + "/tests/test_discovery"], cwd=ROOT)
    print("engine-mutants: %d of %d mutations caught" % (len(M) - missed, len(M)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
