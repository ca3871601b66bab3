"""Health of a run, before, during and after it: the doctor's checks before a run
(`doctor`, `doctor_checks`, `doctor_exploits`), the rules as one table (`table`, each row declared
with its check in `checks/`) and the one engine that runs it (`monitor`; `rules` keeps the public
names), the live callback (`callback`), the symptom -> cause -> fix words (`symptoms`), and the
replay of a finished run (`diagnose`). Each rule's parameters (`health.rules.<id>`) are the config's
(grpokit.config.health_params, health_section); the per-reward counts come from the one reward wrapper
(grpokit.rewards.trainer_rewards).
"""
