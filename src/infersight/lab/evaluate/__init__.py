"""The diagnosis scored on the simulator: the evaluation harness, kept out of the engine.

`accuracy.py` runs the scenario suite (AC@k, healthy windows, cells left out and why);
`scenario_windows.py` places the alert and cuts the windows a user would pull;
`perturbation.py` runs the suite with one simulator knob moved at a time, scored the same way.
The engine (`infersight.diagnose`) never imports this package nor the simulator.
"""
