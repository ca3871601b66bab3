"""Build grpokit's GRPOTrainer from a RunConfig and run its stages, one after another.

Per stage: the GRPOConfig as config/profiles.py built it (complete; nothing is set on it
here), the stage's one RewardSet (built for every stage before any model loads), wrapped once
for TRL (grpokit.rewards.trainer_rewards; nothing is set on the wrapper after it is built) and
shared with the held-out evaluation, and the callbacks that write the run directory
(grpokit.run_directory.layout names its files).
checkpoints[/<stage>]/final/ holds the weights (or LoRA adapter) a stage ends with; the
next stage starts from it.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from grpokit.training import checkpoints as ckpts
from grpokit.config import profiles
from grpokit.models.checkpointing_names import quiet_model_alias
from grpokit.config.run_config import RunConfig, StageConfig, build_reward_set, dump_yaml
from grpokit.data import zero_variance
from grpokit.errors import ConfigError, RunError
from grpokit.run_directory.ranks import is_main_process
from grpokit.tools.chat_template import prepare_tokenizer as prepare_tool_tokenizer
from grpokit.tools.config import trainer_kwargs as tool_trainer_kwargs
from grpokit.tools.timing import tool_time_callbacks
from grpokit.rewards import cut_gap
from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards.trainer_rewards import TrainerRewards
from grpokit.run_directory import layout
from grpokit.training.progress import DEFAULT_EVERY, StepProgress
from grpokit.training.callbacks import MetricsCallback, RewardRecorder, RewardStatsCallback, trim_metrics
from grpokit.health.run_status import mark_failed, mark_finished, mark_started
from grpokit.training.resume import ResumePlan, StagePlan, plan_resume

FINAL = layout.FINAL
DONE = layout.STAGE_DONE


def health_callbacks(cfg: RunConfig, run_dir: Path, calls: TrainerRewards | None = None,
                     stage: str | None = None) -> list:
    """The live health callback (grpokit.health.callback), reading the reward wrapper's errors, and
    run_status.json for a post-mortem. The run's last stage ends it; train() marks it finished."""
    from grpokit.health.callback import HealthCallback
    from grpokit.health.doctor import PlannedPeak
    from grpokit.health.status_callback import RunStatusCallback

    return [HealthCallback.from_config(cfg.health, run_dir, reward_calls=calls, stage=stage),  # ConfigError on a bad key
            RunStatusCallback(run_dir, stage=stage, estimate=PlannedPeak(cfg), finishes_run=False)]


def held_out_callbacks(cfg: RunConfig, stage: StageConfig | None, rewards: RewardSet, run_dir: Path, eval_set,
                       console, first: bool, observers: Iterable = ()) -> list:
    """Held-out accuracy every `eval.every` steps (grpokit.evaluate.during), scored with `rewards`, the
    stage's RewardSet that training scores with (one set per stage); `observers` get each record as it
    is written."""
    if not cfg.eval.every or eval_set is None or len(eval_set) == 0:
        return []
    from grpokit.evaluate.during import HeldOutEvalCallback, accuracy_reward

    training = profiles.resolve_training(cfg, stage)
    specs = cfg.rewards_for(stage)
    rows = [dict(r) for r in eval_set.select(range(min(cfg.eval.prompts, len(eval_set))))]
    temperature = cfg.eval.temperature if cfg.eval.temperature is not None else float(training["temperature"])
    return [HeldOutEvalCallback(
        rows, rewards.funcs, rewards.weights, every=cfg.eval.every, accuracy=accuracy_reward(specs, cfg.data.answer_format),
        metrics_path=run_dir / layout.METRICS, stage=stage.name if stage is not None and cfg.stages else None,
        samples=cfg.eval.samples, temperature=temperature, seed=cfg.data.seed,
        max_new_tokens=cfg.eval.max_new_tokens or int(training["max_completion_length"]),
        baseline=first, console=console, answer_format=cfg.data.answer_format, observers=list(observers))]


def _stages(cfg: RunConfig) -> list[StageConfig | None]:
    return list(cfg.stages) or [None]


def stage_final(cfg: RunConfig, stage: StageConfig | None) -> Path:
    return profiles.checkpoint_root(cfg, stage) / FINAL


def _save_final(trainer, target: Path, step: int, max_steps: int) -> None:
    # Save beside the target, then rename: a crash leaves either no final/ or a whole one.
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".final-", dir=target.parent))
    try:
        trainer.save_model(str(tmp))
        # The steps asked for beside the steps done: a max_steps raised later makes the stage unfinished again.
        ckpts.atomic_write_text(tmp / DONE, json.dumps({"step": step, "max_steps": max_steps}))
        if target.exists():
            shutil.rmtree(target)
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load_for_stage(cfg: RunConfig, previous: Path | None):
    from grpokit.models.loading import load_model

    dtype = profiles.model_dtype(cfg)
    backend = profiles.backend(cfg)
    if previous is None:
        return load_model(cfg.model, dtype=dtype, backend=backend)
    if cfg.model.lora is not None:
        return load_model(cfg.model, dtype=dtype, backend=backend, adapter=str(previous))
    # Full fine-tune: the previous stage's final folder is a whole model.
    import dataclasses

    return load_model(dataclasses.replace(cfg.model, name=str(previous)), dtype=dtype, backend=backend)


def prepare_run_dir(cfg: RunConfig, resume: bool) -> ResumePlan | None:
    """Whether `cfg` may start (a fresh run: None) or resume (its ResumePlan) in its run directory; ConfigError
    saying what to do otherwise. Writes nothing: a refused run leaves the directory as it was."""
    run_dir = cfg.run_dir
    started = (run_dir / layout.METRICS).exists() or (run_dir / layout.CHECKPOINTS).exists()
    if resume and not started:
        raise ConfigError(f"--resume: {run_dir} holds no run to resume; drop --resume to start one")
    if started and not resume:
        raise ConfigError(
            f"{run_dir} already holds a run; pass --resume to continue it, or set another name "
            f"(--set name=...) or output_dir"
        )
    return plan_resume(cfg) if resume else None


def _commit(cfg: RunConfig, plan: ResumePlan | None) -> Path:
    """The moment the run starts (every check passed): config.yaml, then run_status.json "running". Until
    here a resume has changed nothing, so a refused or nothing-to-do resume leaves both as they were."""
    run_dir = cfg.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    if is_main_process():
        ckpts.atomic_write_text(run_dir / layout.CONFIG, dump_yaml(profiles.resolved_config(cfg)))
        where = next((s for s in plan.stages if s.action != "done"), None) if plan is not None else None
        # run_status.json before the model loads: a kill from here on leaves a word.
        mark_started(run_dir, step=ckpts.step_of(where.checkpoint) if where and where.checkpoint else 0,
                     stage=where.name if where else None)
    return run_dir


def train(cfg: RunConfig, *, resume: bool = False, callbacks: Iterable = (), console=None,
          completions_per_step: int = 4, datasets=None, response_prefix: str | None = None,
          progress_every: float = DEFAULT_EVERY) -> Path:
    """Train every stage of `cfg`; returns the run directory.

    `callbacks`: extra TrainerCallbacks (added to every stage). `datasets`: an optional
    (train, eval) pair that replaces loading `cfg.data` (tests, notebooks). `response_prefix`:
    text every answer starts with (a prefill through the chat template; see models.add_response_prefix).
    `progress_every`: seconds between the lines a long step prints on `console` (training.progress).
    """
    profiles.check_runtime(cfg)
    plan = prepare_run_dir(cfg, resume)  # refuses before anything is loaded or written
    if plan is not None:
        if plan.nothing_to_do:
            _say(console, plan.message(cfg))
            return cfg.run_dir
        if plan.warning:
            _say(console, f"warning: {plan.warning}", style="yellow")
    _warn_if_cpu_busy(console)
    if datasets is None:
        from grpokit.data import load_data

        datasets = load_data(cfg.data)
    train_set, eval_set = datasets
    # Built once per stage, before any model loads: a bad reward parameter fails now, not after stage 1.
    reward_sets = {id(stage): build_reward_set(cfg, stage) for stage in _stages(cfg)}
    # Only a config that passed every check gets a run directory: a refused run leaves nothing in runs/.
    run_dir = _commit(cfg, plan)
    _warn_unscorable(train_set, eval_set, console)
    previous: Path | None = None
    step = 0
    try:
        for stage in _stages(cfg):
            stage_plan = plan.stage(stage) if plan is not None else None
            if stage_plan is not None and stage_plan.action == "done":
                previous = stage_final(cfg, stage)  # finished before the crash / previous invocation
                continue
            step = _run_stage(cfg, stage, reward_sets[id(stage)], previous, run_dir, train_set, eval_set,
                              plan=stage_plan, callbacks=list(callbacks), console=console,
                              per_batch=completions_per_step, response_prefix=response_prefix,
                              progress_every=progress_every)
            previous = stage_final(cfg, stage)
    except BaseException as exc:
        if is_main_process():
            mark_failed(run_dir, exc)  # what stopped the run, and whether memory ran out
        raise
    if is_main_process():
        # Only now, with the last stage's final weights and done marker on disk, is the run finished.
        mark_finished(run_dir, step=step)
    return run_dir


def _say(console, text: str, style: str | None = None) -> None:
    if console is not None and is_main_process():
        console.print(text, style=style, markup=False, highlight=False)


def _warn_unscorable(train_set, eval_set, console) -> None:
    from grpokit.data.gold import summary

    message = summary(train_set, eval_set)
    if message and console is not None:
        console.print(f"warning: {message}", style="yellow", markup=False, highlight=False)


def _warn_if_cpu_busy(console) -> None:
    # Most users never run `grpokit doctor`; this one check is cheap and explains the
    # slowest CPU runs (torch threads waiting on cores other jobs hold).
    from grpokit import optional
    from grpokit.health.doctor_checks import check_cpu_load

    if console is None or not is_main_process() or optional.cuda_available():
        return
    check = check_cpu_load()
    if check.status == "warn":
        console.print(f"warning: {check.detail}. Fix: {check.fix}", style="yellow", markup=False, highlight=False)


def _run_stage(cfg, stage, rewards, previous, run_dir, train_set, eval_set, *, plan: StagePlan | None, callbacks,
               console, per_batch, response_prefix=None, progress_every=DEFAULT_EVERY) -> int:
    """Train one stage (resuming it where `plan` says); returns the step it ended at."""
    from grpokit.training.grpo_trainer import GrpokitTrainer

    stage_name = stage.name if stage is not None and cfg.stages else None
    args = profiles.build_grpo_config(cfg, stage)  # complete: nothing below sets a field on it
    recorder = RewardRecorder(run_dir / layout.COMPLETIONS, stage_name, per_batch=per_batch)
    # Online zero-variance filter (data.drop_zero_variance_after); None when unset.
    dropper = zero_variance.filter_for(cfg, args.num_generations)
    if dropper is not None:
        train_set = zero_variance.with_row_ids(train_set)
    root = Path(args.output_dir)
    resume = plan is not None
    checkpoint = ckpts.latest_complete(root, remove_broken=is_main_process()) if resume else None
    if resume and is_main_process():
        # What was logged after the checkpoint is redone: drop it, so no step appears twice (alerts too:
        # the restored monitor raises them again if the redone steps show the same).
        # With no checkpoint the stage starts over, its step-0 evaluation included.
        kept = ckpts.step_of(checkpoint) if checkpoint is not None else -1
        for log in (layout.METRICS, layout.COMPLETIONS, layout.ALERTS):
            trim_metrics(run_dir / log, stage_name, kept)
        if console is not None:
            label = stage_name or "run"
            if checkpoint is None:
                said = f"--resume: no complete checkpoint in {root}; starting {stage_name or 'the run'} again from step 0"
            elif plan.action == "extend":
                said = (f"extending {label} from step {plan.done_step} to max_steps {plan.max_steps}: "
                        f"resuming from {checkpoint}")
            else:
                said = f"resuming {label} from {checkpoint}"
            console.print(said, markup=False, highlight=False)

    model, tokenizer = _load_for_stage(cfg, previous)
    if response_prefix:
        from grpokit.models.loading import add_response_prefix

        add_response_prefix(tokenizer, response_prefix)
    if cfg.tools:
        prepare_tool_tokenizer(tokenizer, cfg.environment.chat_template)  # ConfigError: what to change
    if args.gradient_checkpointing and hasattr(model, "enable_input_require_grads") and cfg.model.lora is not None:
        # LoRA freezes the embeddings, so checkpointed blocks would see inputs without grad.
        model.enable_input_require_grads()
    # The one wrapper TRL calls: watchdog, completions.jsonl, the filter, the per-reward numbers. Built
    # whole, once the tokenizer is final (TRL's stop ids tell cut completions), and not changed after.
    calls = TrainerRewards(rewards, observers=[recorder.record] + ([dropper.observe_batch] if dropper else []),
                           stop_ids=cut_gap.stop_ids(model, tokenizer))
    health = health_callbacks(cfg, run_dir, calls, stage_name)
    if checkpoint is not None:
        # The monitor goes on from where the checkpoint left it: baselines, patience, alerts already raised.
        health[0].restore(checkpoint, run_dir / layout.METRICS)
    # The step-0 baseline was measured before the checkpoint was saved (the Trainer calls on_train_begin
    # before it restores the step, so it would be measured and logged again).
    observers = [cb.observe_held_out for cb in health if hasattr(cb, "observe_held_out")]
    held_out = held_out_callbacks(cfg, stage, rewards, run_dir, eval_set, console,
                                  first=previous is None and checkpoint is None, observers=observers)
    use_eval = args.eval_strategy != "no" and eval_set is not None
    progress = StepProgress(console, every=progress_every, stage=stage_name)
    trainer = GrpokitTrainer(
        model=model,
        reward_funcs=calls.funcs,
        args=args,
        zero_variance=dropper,
        progress=progress,
        train_dataset=train_set,
        eval_dataset=eval_set if use_eval else None,
        processing_class=tokenizer,
        **tool_trainer_kwargs(cfg.tools, cfg.environment),
        callbacks=[
            # The health monitor's state goes into each checkpoint, before its completion marker.
            ckpts.CompleteMarkerCallback(states={layout.HEALTH_STATE: health[0].state_dict}),
            ckpts.CadenceFromArgs(),
            # The rewards' numbers first: they go into the logs the health rules read and MetricsCallback writes.
            RewardStatsCallback(calls),
            *health,
            *tool_time_callbacks(cfg.tools),  # tools/seconds and tools/time_share, into the same logs
            MetricsCallback(run_dir / layout.METRICS, stage_name, console, calls.names),
            progress,  # a line every progress_every seconds while a step runs long
            *held_out,
            *callbacks,
        ],
    )
    try:
        with quiet_model_alias():  # TRL uses the old checkpointing aliases around each generation
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except (ConfigError, RunError):
        raise
    except Exception as exc:
        fix = profiles.unused_parameters_fix(exc)
        raise RunError(f"training {'stage ' + stage_name if stage_name else 'run'} failed: {exc!r}"
                       + (f"\nFix: {fix}" if fix else "")) from exc
    finally:
        progress.close()  # on_train_end does not run when training raises
    _save_final(trainer, stage_final(cfg, stage), trainer.state.global_step, args.max_steps)
    return int(trainer.state.global_step)
