"""Health of a run, before, during and after it: the doctor's checks before a run
(`doctor`, `doctor_checks`, `doctor_exploits`), the live rules and their callback
(`rules`, `callback`), the symptom -> cause -> fix table (`symptoms`), and the
replay of a finished run's logs (`diagnose`). The thresholds (`health:`) are the config's
(grpokit.config.health_section); the per-reward counts come from the one reward wrapper
(grpokit.rewards.trainer_rewards).
"""
