"""The tests `make test` leaves out for their time (issue 50): each took over 3 s of its own (fixtures aside) on
one CPU core under `pytest --durations` (2026-11-28, the core shared with a training run and other tests: load 6-11).
Most start processes: a command, a pool of encoder workers, a training run stopped by a signal and resumed.
tests/conftest.py marks them `slow`, beside the tests marked so where they are defined (real data), so that `make
test` (not slow, not distributed) stays a contributor's loop of minutes; `make test-all` (CI) runs them.

A test is named without its parameters (every case of it is slow), a file alone where each of its tests runs a
script (tests/benchmarks/). tests/test_front_door.py checks that each name is still a test, or a file.
"""

SLOW = {
    "tests/benchmarks/test_benchmark_scripts.py",  # each test runs a measurement script at toy scale: 8-76 s
    "tests/benchmarks/test_claims.py",  # 13-114 s
    "tests/benchmarks/test_length_and_dev_scripts.py",  # 12-38 s
    "tests/benchmarks/test_measurement_scripts.py",  # 8-195 s
    "tests/benchmarks/test_results_scripts.py::test_tiny_retrieval_trains_both_arms_and_writes_their_figures",  # 82 s
    "tests/benchmarks/test_results_scripts.py::test_xnli_results_writes_english_de_fr_and_the_zero_shot_drop",  # 15 s
    "tests/core/test_checkpoint.py::test_a_tokenizer_swapped_in_a_pt_file_is_found_by_its_fingerprint",  # 3 s
    "tests/core/test_checkpoint.py::test_tokenizers_swapped_in_a_pt_file_with_their_fingerprints_removed_are_refused",  # 5 s
    "tests/crosslingual/test_crosslingual.py::test_reports_hold_matrix_marks_and_drop",  # 3 s
    "tests/crosslingual/test_crosslingual_retrieval.py::test_retrieval_and_neutrality_take_a_named_set",  # 5 s
    "tests/crosslingual/test_crosslingual_tables.py::test_tables_for_several_models",  # 10 s
    "tests/crosslingual/test_language_id.py::test_accuracy_is_per_language_and_per_input_length",  # 4 s
    "tests/crosslingual/test_language_id.py::test_the_command_on_test_2016_gives_auto_equal_to_given",  # 8 s
    "tests/crosslingual/test_language_id.py::test_the_identifier_study_scores_py3langid_per_language_and_length",  # 10 s
    "tests/encoders/test_encoder_api.py::test_closed_and_broken_streams",  # 8 s
    "tests/encoders/test_st_habits.py::test_encode_multi_process_in_a_script_without_a_main_guard_is_one_clear_error",  # 34 s
    "tests/encoders/test_st_habits.py::test_encode_multi_process_on_the_encoder_gives_what_encode_gives",  # 25 s
    "tests/encoders/test_st_habits.py::test_max_seq_length_to_and_eval",  # 15 s
    "tests/evaluation/test_bench_heads.py::test_same_heads_forms_everywhere",  # 20 s
    "tests/mining/test_mining_cli.py::test_a_signal_during_a_pool_of_encoders_is_one_line_and_the_shards_resume",  # 186 s
    "tests/mining/test_mining_cli.py::test_align_mode_scores_line_pairs_and_documents",  # 6 s
    "tests/mining/test_mining_cli.py::test_mining_finds_the_translations_among_distractors",  # 6 s
    "tests/mining/test_mining_cli.py::test_mining_keeps_pairs_at_the_default_threshold_unless_told_all",  # 6 s
    "tests/mining/test_mining_cli.py::test_shards_of_another_model_or_dimension_are_refused",  # 5 s
    "tests/mining/test_mining_cli.py::test_shards_serve_the_next_mining",  # 5 s
    "tests/mining/test_mining_cli.py::test_sigint_at_any_moment_is_one_line",  # 10 s
    "tests/mining/test_mining_cli.py::test_sigterm_during_mining_leaves_no_temporary_shard_folder",  # 19 s
    "tests/mining/test_mining_pool.py::test_a_hung_worker_is_stopped_after_job_timeout_and_the_next_run_finishes",  # 4 s
    "tests/mining/test_mining_pool.py::test_a_killed_worker_is_one_error_and_the_next_run_finishes",  # 3 s
    "tests/mining/test_mining_pool.py::test_a_pool_writes_the_bytes_one_process_writes_and_resumes",  # 5 s
    "tests/mining/test_mining_pool.py::test_kill_9_of_the_parent_leaves_complete_shards_and_no_workers",  # 6 s
    "tests/mining/test_mining_quantized.py::test_mining_shard_folders_never_loads_torch",  # 11 s
    "tests/mining/test_mining_shards.py::test_a_folder_cut_at_another_length_is_refused",  # 7 s
    "tests/mining/test_mining_shards.py::test_kill_9_loses_at_most_the_shard_being_written",  # 10 s
    "tests/model/test_loss.py::test_a_toy_run_keeps_the_loss_curve_of_f_cross_entropy",  # 4 s
    "tests/probing/test_probing.py::test_one_name_per_task_everywhere",  # 3 s
    "tests/senteval/test_senteval_protocols.py::test_stacked_models_reproduce_sentevals_sequential_training",  # 4 s
    "tests/test_bad_input.py::test_command_line_rows",  # 34 s
    "tests/test_cli_conventions.py::test_a_warning_is_one_plain_line_in_every_command",  # 21 s
    "tests/test_cli_conventions.py::test_ctrl_c_while_torch_imports_is_one_line",  # 7 s
    "tests/test_docs.py::test_python_examples_of_docs_run_on_small_data_in_the_real_layout",  # 43 s, 6 documents
    "tests/test_docs.py::test_python_examples_run_and_their_comments_hold",  # 6 s
    "tests/test_docs.py::test_the_output_a_command_example_shows_is_what_it_prints",  # 24 s
    "tests/test_edges.py::test_every_shared_option_is_declared_in_one_module",  # 13 s
    "tests/test_front_door.py::test_mine_checks_its_languages_before_it_looks_for_faiss",  # 13 s
    "tests/test_full_disk.py::test_a_full_disk_while_appending_to_the_training_log_leaves_whole_lines",  # 34 s
    "tests/test_full_disk.py::test_a_full_disk_while_encoding_to_a_file_names_the_cause",  # 55 s
    "tests/test_full_disk.py::test_a_full_disk_while_grafting_decoders_keeps_the_old_output",  # 46 s
    "tests/test_full_disk.py::test_a_full_disk_while_preparing_data_keeps_what_the_cache_held",  # 44 s
    "tests/test_full_disk.py::test_a_full_disk_while_training_saves_a_checkpoint_keeps_the_last_good_one",  # 76 s
    "tests/test_full_disk.py::test_a_full_disk_while_writing_a_pt_file_keeps_the_old_one",  # 97 s
    "tests/test_no_data_loss.py::test_a_full_disk_during_a_benchmark_keeps_the_earlier_result_set_whole",  # 128 s
    "tests/test_no_data_loss.py::test_a_full_disk_during_an_export_keeps_the_old_model_whole",  # 64 s
    "tests/test_no_data_loss.py::test_a_killed_export_leaves_the_old_model_whole_and_the_next_export_clean",  # 60 s
    "tests/test_no_data_loss.py::test_a_killed_first_export_does_not_block_the_next",  # 28 s
    "tests/test_no_data_loss.py::test_an_encoder_is_never_saved_over_what_it_was_loaded_from",  # 8 s
    "tests/test_no_data_loss.py::test_an_unfinished_save_can_be_saved_again",  # 7 s
    "tests/test_no_data_loss.py::test_export_over_another_models_folder_keeps_none_of_its_files",  # 10 s
    "tests/test_no_data_loss.py::test_mine_never_writes_over_the_text_a_shard_folder_was_encoded_from",  # 3 s
    "tests/test_no_data_loss.py::test_no_command_writes_over_its_model",  # 11 s
    "tests/test_no_data_loss.py::test_what_an_export_killed_before_issue_40_left_in_its_folder_neither_blocks_nor_survives_the_next",  # 16 s
    "tests/test_real_data_skips.py::test_an_empty_data_folder_skips_the_real_data_tests",  # 44 s
    "tests/test_resolved_once.py::test_bridge_encoder_resolves_its_device_and_quantize_once",  # 7 s
    "tests/test_resolved_once.py::test_one_threads_setter",  # 18 s
    "tests/test_resolved_once.py::test_the_count_sees_a_second_copy",  # 6 s
    "tests/text/test_data.py::test_a_stray_carriage_return_never_splits_a_line",  # 3 s
    "tests/text/test_prepare.py::test_a_corrupt_or_half_written_cache_is_rebuilt_with_a_warning",  # 3 s
    "tests/text/test_prepare.py::test_a_kill_loses_only_the_file_in_progress",  # 3 s
    "tests/text/test_prepare.py::test_the_tokenizers_and_ids_of_the_in_memory_path",  # 4 s
    "tests/text/test_prepare.py::test_training_takes_the_same_steps_as_on_the_in_memory_path",  # 5 s
    "tests/text/test_prepare_command.py::test_sigterm_or_sighup_during_preparation_stops_the_workers_quietly",  # 58 s
    "tests/training/test_alignment.py::test_alignment_raises_retrieval_on_a_tiny_corpus",  # 12 s
    "tests/training/test_alignment.py::test_bf16_training_resumes_exactly",  # 10 s
    "tests/training/test_alignment.py::test_translate_share_benchmark_times_both_kinds_of_step",  # 33 s
    "tests/training/test_alignment.py::test_validation_logs_retrieval_and_selects_by_it",  # 6 s
    "tests/training/test_alignment.py::test_weight_zero_is_the_papers_step",  # 7 s
    "tests/training/test_corpora.py::test_alignment_only_corpus_adds_no_translation_loss_and_translation_only_no_alignment",  # 4 s
    "tests/training/test_corpora.py::test_any_positive_weights_are_served_by_a_bounded_schedule",  # 3 s
    "tests/training/test_corpora.py::test_resume_of_a_run_on_two_corpora_is_exact",  # 10 s
    "tests/training/test_corpora.py::test_run_on_two_corpora_validates_each_and_never_trains_on_held_out_lines",  # 12 s
    "tests/training/test_init_from.py::test_anchor_weight_holds_fine_tuning_near_the_start",  # 7 s
    "tests/training/test_init_from.py::test_keep_weight_holds_the_sentence_vectors_of_the_start",  # 6 s
    "tests/training/test_subword_dropout.py::test_resume_with_subword_dropout_is_exact",  # 20 s
    "tests/training/test_subword_dropout.py::test_the_key_gives_the_same_segmentations_in_every_process",  # 21 s
    "tests/training/test_train_output.py::test_each_validation_prints_a_line_without_a_terminal",  # 20 s
    "tests/training/test_train_output.py::test_without_a_terminal_training_logs_a_progress_line_per_log_interval",  # 3 s
    "tests/training/test_trainer.py::test_a_config_inside_out_dir_is_never_overwritten",  # 3 s
    "tests/training/test_trainer.py::test_a_full_disk_during_a_checkpoint_save_keeps_the_last_good_one",  # 9 s
    "tests/training/test_trainer.py::test_a_non_finite_loss_stops_and_keeps_the_last_good_checkpoint",  # 4 s
    "tests/training/test_trainer.py::test_a_resume_with_a_new_lr_applies_it_and_says_so",  # 6 s
    "tests/training/test_trainer.py::test_a_second_trainer_on_the_same_out_dir_is_refused",  # 45 s
    "tests/training/test_trainer.py::test_a_trainer_handed_its_parts_trains_as_from_config",  # 12 s
    "tests/training/test_trainer.py::test_early_stopping_and_lr_decay",  # 3 s
    "tests/training/test_trainer.py::test_kill_resumes_from_last_checkpoint_exactly",  # 24 s
    "tests/training/test_trainer.py::test_log_after_a_kill_and_resume_has_each_step_once_in_order",  # 8 s
    "tests/training/test_trainer.py::test_resume_reaches_the_same_parameters",  # 14 s
    "tests/training/test_trainer.py::test_sighup_saves_and_exits_129",  # 32 s
    "tests/training/test_trainer.py::test_sigint_saves_and_resumes_exactly",  # 40 s
    "tests/training/test_trainer.py::test_sigterm_saves_and_exits_143",  # 23 s
}
